package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlClient;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.RunResult;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server that falls silent in the middle of a step (its process stopped with SIGSTOP: the control connection
 * stays open, nothing answers, no FIN or RST) must not leave the controller sending to it: the controller's poll
 * gives up after {@code RemoteReceiveSide.STEP_SILENCE_MS} (5 s, not the control timeout: 15 s here) and its
 * senders stop. The datagrams are counted by the kernel, where they arrive: the stopped server's socket's queue and
 * drops in /proc/net/udp. Ports 44920-44921.
 */
@Tag("system")
class ServerSilenceTest {
    private static final String SECRET = "a server that stops answering";
    private static final int PORT = 44920;
    private static final long BOUND_MS = 5_000;
    private static final long SLACK_MS = 750;

    @Test
    @Timeout(90)
    void aControllerSendingToASilentServerStopsWithinTheBound() throws Exception {
        silentServer(PORT, 0);
    }

    /**
     * The same in a long warm-up: the controller polls the server's receivers there too, so the bound holds from the
     * first message (before, a server gone in the warm-up was found only as the window began: warm-up + 5 s).
     */
    @Test
    @Timeout(90)
    void aServerSilentInTheWarmupIsFoundWithinTheBound() throws Exception {
        silentServer(PORT + 1, TimeUnit.SECONDS.toNanos(30));
    }

    private void silentServer(int port, long warmupNs) throws Exception {
        Process server = new ProcessBuilder(new File(System.getProperty("java.home"), "bin/java").getPath(),
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
            Serve.class.getName()).redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(),
                StandardCharsets.UTF_8));
            String line = out.readLine();
            assertThat(line).as("the server's first line").startsWith("port ");
            int controlPort = Integer.parseInt(line.substring(5).trim());
            Plan plan = new Plan(List.of("udp"), 1, port, List.of(Level.parse("2k")), TimeUnit.SECONDS.toNanos(30),
                warmupNs, TimeUnit.SECONDS.toNanos(1), 64, "127.0.0.1");
            Auth auth = Auth.ofSecret(SECRET);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            java.util.concurrent.atomic.AtomicLong received = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.atomic.AtomicLong warmedUpNs = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.atomic.AtomicLong endedNs = new java.util.concurrent.atomic.AtomicLong();
            try (ControlClient client = ControlClient.connect("127.0.0.1", controlPort, auth, 15_000)) {
                client.negotiate(plan, 55, Map.of());
                UdpTransport udp = new UdpTransport();
                CompletableFuture<RunResult> run = CompletableFuture.supplyAsync(() -> {
                    try {
                        return new RunEngine(plan, Map.of("udp", udp), Map.of(), new RunListener() {
                            @Override
                            public void progress(String t, int step, Phase phase, long elapsedNs, long totalNs,
                                                 long sent, long receivedSoFar) {
                                received.set(receivedSoFar);
                                if (phase == Phase.WARMUP) {
                                    warmedUpNs.set(elapsedNs);
                                }
                            }
                        }, StepHooks.NONE, client.receiveSides(), "127.0.0.1", 55).run();
                    } catch (Exception e) {
                        failure.set(e);
                        throw new IllegalStateException(e);
                    } finally {
                        endedNs.set(System.nanoTime());
                    }
                });
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
                // The step is under way: the server counts the window's messages, or the warm-up has run 300 ms.
                while (warmupNs == 0 ? received.get() < 300 : warmedUpNs.get() < 300_000_000L) {
                    assertThat(System.nanoTime()).as("the step under way within 15 s").isLessThan(until);
                    LockSupport.parkNanos(5_000_000L);
                }
                new ProcessBuilder("kill", "-STOP", Long.toString(server.pid())).start().waitFor(5, TimeUnit.SECONDS);
                long silentFromNs = System.nanoTime();
                // The kernel keeps taking datagrams for the stopped process (into its queue, then as drops): the
                // moment they stop moving is the moment this host stopped sending.
                long lastMoveNs = silentFromNs;
                long last = arrivals(port);
                long deadline = silentFromNs + TimeUnit.SECONDS.toNanos(20);
                while (System.nanoTime() < deadline && System.nanoTime() - lastMoveNs < 1_000_000_000L) {
                    long now = arrivals(port);
                    if (now != last) {
                        last = now;
                        lastMoveNs = System.nanoTime();
                    }
                    LockSupport.parkNanos(5_000_000L);
                }
                long stoppedAfterMs = TimeUnit.NANOSECONDS.toMillis(lastMoveNs - silentFromNs);
                System.out.println("silent server (warm-up " + warmupNs / 1_000_000 + " ms): last datagram in "
                    + stoppedAfterMs + " ms into the silence");
                assertThat(stoppedAfterMs).as("ms from the server's silence to the last datagram")
                    .isLessThanOrEqualTo(BOUND_MS + SLACK_MS);
                assertThatThrownBy(() -> run.get(40, TimeUnit.SECONDS)).hasMessageContaining("did not answer");
                assertThat(failure.get()).hasMessageContaining("within 5000 ms");
                // Having given up, the run ends at once: no request after the silent one waits out the control
                // timeout (15 s here) again.
                long endedAfterMs = TimeUnit.NANOSECONDS.toMillis(endedNs.get() - silentFromNs);
                System.out.println("silent server: the run ended " + endedAfterMs + " ms into the silence");
                assertThat(endedAfterMs).as("ms from the server's silence to the run's end")
                    .isLessThanOrEqualTo(BOUND_MS + 2 * SLACK_MS);
            }
        } finally {
            new ProcessBuilder("kill", "-CONT", Long.toString(server.pid())).start().waitFor(5, TimeUnit.SECONDS);
            server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /**
     * What the kernel has taken for the stopped server's data socket and not handed over, plus what it dropped there
     * (bytes of queue, and drops weighted far above any queue): a figure that moves exactly while datagrams arrive.
     */
    private static long arrivals(int port) {
        try {
            String hexPort = String.format("%04X", port);
            for (String file : List.of("/proc/net/udp", "/proc/net/udp6")) { // the server's socket is dual-stack
                for (String l : Files.readAllLines(Path.of(file))) {
                    String[] f = l.trim().split("\\s+");
                    if (f.length > 12 && f[1].endsWith(":" + hexPort)) {
                        long rxQueue = Long.parseLong(f[4].substring(f[4].indexOf(':') + 1), 16);
                        long drops = Long.parseLong(f[12]);
                        return rxQueue + drops * 1_000_000L;
                    }
                }
            }
            throw new AssertionError("no socket on port " + port);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The child process: a server on an ephemeral control port, which it prints first. */
    static final class Serve {
        public static void main(String[] args) throws Exception {
            ControlServer server = new ControlServer("127.0.0.1", 0, Auth.ofSecret(SECRET), ServerLimits.DEFAULTS,
                () -> Map.of("udp", new UdpTransport()), null);
            System.out.println("port " + server.port());
            System.out.flush();
            Thread.currentThread().join(); // until killed
        }
    }
}
