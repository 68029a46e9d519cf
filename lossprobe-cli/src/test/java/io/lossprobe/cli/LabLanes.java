package io.lossprobe.cli;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The namespace-lab test classes run in two lanes beside this module's loopback tests, which run one class and
 * one test at a time on the main thread (src/test/resources/junit-platform.properties); each lane runs one lab
 * class at a time, its tests one after another. A lab class's traffic stays inside its own namespaces (each class
 * has its own prefix), so it shares no port or interface with a loopback test or the other lane; what they share
 * is the CPU, and the tests hold on a busy machine (a starved sender is reported, {@link Lab#sentItsSchedule}).
 * Balance the lanes by the classes' run times when adding one.
 */
final class LabLanes {
    private LabLanes() {
    }

    /** The first lane. */
    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @Execution(ExecutionMode.CONCURRENT)
    @ResourceLock("namespace-lab-lane-1")
    @interface First {
    }

    /** The second lane. */
    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @Execution(ExecutionMode.CONCURRENT)
    @ResourceLock("namespace-lab-lane-2")
    @interface Second {
    }
}
