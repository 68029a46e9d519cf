package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.SenderLimit;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.Transport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A sender starved of CPU on purpose, for real: as the window begins, the UDP sending thread is pinned to CPU 0 at
 * nice 19 beside a busy thread of this test's at nice 0 pinned there too (for at most the window and a second), so
 * the sender gets a sliver of the CPU and falls behind; the step must say it was starved of CPU, with the run queue
 * wait the kernel counted, not that it was held back or at its own limit. Needs Linux with taskset and renice.
 */
@Tag("system")
class StarvedSenderTest extends TransportContractTest {
    private static final long WINDOW_NS = TimeUnit.SECONDS.toNanos(1);

    @Override
    protected Transport transport() {
        return new UdpTransport();
    }

    @Override
    protected int basePort() {
        return 41300;
    }

    @Test
    @Timeout(60)
    void aSenderKeptOffItsCpuIsStarvedOfCpu() throws Exception {
        assumeTrue(Runtime.getRuntime().availableProcessors() >= 2 && sh("taskset", "-V") == 0,
            "needs two CPUs and taskset");
        List<Thread> hogs = new ArrayList<>();
        StepHooks starve = new StepHooks() {
            @Override
            public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs) {
                if (hogs.isEmpty()) {
                    hogs.add(hog(System.nanoTime() + WINDOW_NS + TimeUnit.SECONDS.toNanos(1)));
                    for (String tid : threads("lossprobe-udp-t")) {
                        sh("taskset", "-p", "-c", "0", tid);
                        sh("renice", "-n", "19", "-p", tid);
                    }
                }
            }
        };
        Plan plan = new Plan(List.of("udp"), 4, basePort(), List.of(Level.parse("1M")), WINDOW_NS,
            TimeUnit.MILLISECONDS.toNanos(200), TimeUnit.MILLISECONDS.toNanos(500), 64, LOOPBACK);
        RunResult result;
        try {
            result = run(plan, starve);
        } finally {
            for (Thread t : hogs) {
                t.interrupt();
                t.join(TimeUnit.SECONDS.toMillis(5));
            }
        }
        assertIdentities(result);
        StepResult s = result.steps().get(0);
        SenderLimit l = s.senderLimit();
        System.out.println("starved step: " + s.counts() + " " + l + " " + s.warnings());
        assertThat(hogs).as("the hook ran in the window").hasSize(1);
        assertThat(s.counts().behind()).as("the starved sender fell behind").isPositive();
        assertThat(l.reason()).isEqualTo(SenderLimit.Reason.STARVED_OF_CPU);
        assertThat(l.runQueueWaitNs()).as("waited on a run queue for much of the window")
            .isGreaterThan(l.windowNs() / 4);
        assertThat(s.warnings()).anyMatch(w -> w.startsWith("the sender fell behind by ")
            && w.contains(": starved of CPU (its thread waited "));
    }

    /** A thread that pins itself to CPU 0 and spins there until {@code untilNs} or an interrupt. */
    private static Thread hog(long untilNs) {
        Thread t = new Thread(() -> {
            sh("taskset", "-p", "-c", "0", ownTid());
            long spins = 0;
            while (System.nanoTime() < untilNs && !Thread.currentThread().isInterrupted()) {
                spins++;
            }
            if (spins < 0) {
                System.out.println(spins); // never: keeps the loop from being taken away
            }
        }, "starved-sender-test-hog");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static String ownTid() {
        try {
            return Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
        } catch (IOException e) {
            throw new IllegalStateException("no /proc/thread-self", e);
        }
    }

    /** This process's threads whose name starts with {@code prefix} (as /proc shows it, cut at 15 characters). */
    private static List<String> threads(String prefix) {
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            return tasks.filter(p -> {
                try {
                    return Files.readString(p.resolve("comm")).startsWith(prefix);
                } catch (IOException e) {
                    return false;
                }
            }).map(p -> p.getFileName().toString()).toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private static int sh(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(20, TimeUnit.SECONDS) ? p.exitValue() : -1;
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
