package io.lossprobe.core.pacing;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * The time the engine and the send driver run on: {@link #SYSTEM} in a run; in tests, a virtual clock whose time
 * moves only when someone waits, so the engine's step boundaries can be driven deterministically.
 */
public interface NanoClock {
    NanoClock SYSTEM = System::nanoTime;

    long nanoTime();

    /** Waits about {@code ns}. */
    default void parkNanos(long ns) {
        LockSupport.parkNanos(ns);
    }

    /** Waits up to {@code timeoutNs} for {@code future}; true when it completed (normally or not). */
    default boolean await(Future<?> future, long timeoutNs) throws InterruptedException {
        try {
            future.get(timeoutNs, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            return true;
        }
        return true;
    }
}
