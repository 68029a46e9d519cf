package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.transport.ReceiverEndpoint;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The embedded driver's directory, threads and mapped files exist while a run steps and are gone when it ends;
 * steps do not add to them. Checked against the whole JVM, so a leak from any earlier Aeron test shows here too.
 */
@Tag("system")
class AeronResourcesTest {
    private static final String DIR_PREFIX = AeronDriver.DIR_PREFIX + ProcessHandle.current().pid() + "-";
    private static final long RELEASE_DEADLINE_NS = TimeUnit.SECONDS.toNanos(10);

    @Test
    @Timeout(60)
    void everyStepAndRunReleasesTheDriversDirectoryThreadsAndMappings() throws Exception {
        Map<Integer, Integer> mappingsByStep = new ConcurrentHashMap<>();
        Map<Integer, List<String>> threadsByStep = new ConcurrentHashMap<>();
        Map<Integer, Integer> dirsByStep = new ConcurrentHashMap<>();
        StepHooks census = new StepHooks() {
            @Override
            public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs)
                throws IOException {
                if (elapsedNs >= TimeUnit.MILLISECONDS.toNanos(200) && !mappingsByStep.containsKey(step)) {
                    threadsByStep.put(step, aeronThreads());
                    dirsByStep.put(step, ourDirectories().size());
                    mappingsByStep.put(step, ourMappings().size());
                }
            }
        };

        for (int run = 0; run < 2; run++) {
            mappingsByStep.clear();
            RunResult result = AeronRuns.run(new AeronTransport(),
                AeronRuns.plan(4, 43400, List.of("2k", "4k"), 500), Map.of(), census);

            assertThat(result.status()).hasToString("complete");
            assertThat(result.steps()).allSatisfy(s -> assertThat(s.counts().lost()).isZero());
            System.out.println("run " + run + ": mappings by step " + mappingsByStep + ", threads " + threadsByStep);
            assertThat(dirsByStep).containsEntry(0, 1).containsEntry(1, 1);
            assertThat(mappingsByStep.get(0)).isPositive();
            assertThat(mappingsByStep.get(1)).as("no mapping added by a step").isEqualTo(mappingsByStep.get(0));
            assertThat(threadsByStep.get(0)).isNotEmpty();
            assertThat(threadsByStep.get(1)).as("no thread added by a step").hasSameSizeAs(threadsByStep.get(0));

            awaitReleased();
        }
    }

    static void awaitReleased() throws IOException {
        await("no Aeron directory of this process left", () -> ourDirectories().isEmpty());
        await("no Aeron file of this process still mapped", () -> ourMappings().isEmpty());
        await("no driver, client or probe Aeron thread left", () -> aeronThreads().isEmpty());
    }

    private static void await(String what, IoCondition condition) throws IOException {
        long deadline = System.nanoTime() + RELEASE_DEADLINE_NS;
        while (!condition.holds()) {
            if (System.nanoTime() >= deadline) {
                assertThat(condition.holds()).as(what + " within 10 s (dirs " + ourDirectories() + ", maps "
                    + ourMappings() + ", threads " + aeronThreads() + ")").isTrue();
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    static List<String> ourDirectories() {
        List<String> found = new ArrayList<>();
        for (String base : List.of("/dev/shm", System.getProperty("java.io.tmpdir"))) {
            File[] entries = new File(base).listFiles((dir, name) -> name.startsWith(DIR_PREFIX));
            if (entries != null) {
                for (File f : entries) {
                    found.add(f.getPath());
                }
            }
        }
        return found;
    }

    static List<String> ourMappings() throws IOException {
        return Files.readAllLines(Path.of("/proc/self/maps")).stream()
            .filter(line -> line.contains(AeronDriver.DIR_PREFIX)).toList();
    }

    /** Threads of the media driver's agents, the Aeron client conductor, and this module's own threads. */
    static List<String> aeronThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
            .filter(AeronResourcesTest::isAeronThread).sorted().toList();
    }

    private static boolean isAeronThread(String name) {
        return name.contains("aeron") || name.contains("driver-conductor") || name.equals("sender")
            || name.equals("receiver") || name.contains("[") && (name.contains("sender") || name.contains("receiver"));
    }

    @FunctionalInterface
    private interface IoCondition extends BooleanSupplier {
        boolean holdsOrThrow() throws IOException;

        default boolean holds() throws IOException {
            return holdsOrThrow();
        }

        @Override
        default boolean getAsBoolean() {
            try {
                return holdsOrThrow();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }
}
