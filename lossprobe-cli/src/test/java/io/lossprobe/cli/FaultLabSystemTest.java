package io.lossprobe.cli;

import static io.lossprobe.cli.Lab.RX;
import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Faults in the namespace lab (scripts/lab.sh, one sender host), with the switch's nftables counters as the witness:
 * every data packet to or from the server's host is counted there on its way through, so the moment each counter
 * stops moving is the moment each side stopped sending. For every fault (the server killed, the controller killed,
 * the control connection cut without FIN or RST) and mode (stream, {@code --reverse}, echo; {@code --reverse} with
 * echo is refused), no data packet from
 * either side is counted later than the bound after the fault, and the files say what happened:
 * <ul>
 *   <li>a side that died closes its control connection (its kernel sends FIN or RST): its peer stops within
 *       {@link #CLOSED_BOUND_MS};</li>
 *   <li>a control connection cut off without a word: a controller's poll, or a server's watch over its controller
 *       during a send step, gives up after 5 s of silence, so each side stops within {@link #SILENT_BOUND_MS}.</li>
 * </ul>
 * Its own lab (LAB_FAULT_PREFIX, default lf-), so it can run beside LabSystemTest's. Needs root, iproute2, nftables.
 */
@Tag("lab")
@LabLanes.Second
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class FaultLabSystemTest {
    /** A peer that died: its kernel closed the control connection, and the other side stops at once. */
    static final long CLOSED_BOUND_MS = 2_000;
    /** A peer that fell silent: 5 s without an answer (the watchdogs' limit), plus a poll and the sampling. */
    static final long SILENT_BOUND_MS = 6_000;
    /** How long both counters must stand still before a side is taken to have stopped. */
    private static final long QUIET_MS = 2_000;
    /** The lab under LAB_FAULT_PREFIX (default lf-). */
    private Lab lab;
    private Path work;
    private Path secret;
    private final List<Process> started = new ArrayList<>();
    /** Runs so far: each takes ports of its own unless it retries another's ({@link #controllerOn}). */
    private int runs;
    /** One server for the class (each fault leaves it serving), until the last test kills it. */
    private Running server;

    @BeforeAll
    void upLab() throws Exception {
        lab = Lab.assumed("LAB_FAULT_PREFIX", "lf-");
        assertThat(lab.run("up", "1").exit()).isZero();
        work = Files.createTempDirectory("lossprobe-faults");
        secret = work.resolve("secret");
        io.lossprobe.control.Auth.writeNewSecret(secret);
        server = start(lab.ns("rx"), "serve", "--bind", RX, "--secret-file", secret.toString());
        await("serve listening", () -> server.printed("listening on"), 60_000);
        started.clear(); // the server outlives each test
    }

    @AfterAll
    void downLab() throws Exception {
        if (server != null) {
            server.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        if (lab != null) {
            lab.down();
        }
    }

    @BeforeEach
    void clear() throws Exception {
        assertThat(lab.run("clear").exit()).isZero();
    }

    @AfterEach
    void stopProcesses() throws Exception {
        for (Process p : started) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        started.clear();
    }

    /** A started process and the lines it printed so far. */
    record Running(Process process, List<String> lines) {
        boolean printed(String text) {
            return lines.stream().anyMatch(l -> l.contains(text));
        }

        String output() {
            return String.join("\n", lines);
        }
    }

    private Running start(String ns, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns));
        cmd.addAll(Lab.java());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start(); // ip netns exec execs: p is the JVM
        started.add(p);
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process ended
            }
        });
        reader.setDaemon(true);
        reader.start();
        return new Running(p, lines);
    }

    /** A run from the sender host over 4 flows (its levels and duration in {@code extra}). */
    private Running controller(String name, String... extra) throws IOException {
        return controllerOn(47600 + 10 * runs++, name, extra);
    }

    /** {@link #controller} on the ports from {@code basePort}. */
    private Running controllerOn(int basePort, String name, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("run", "--target", RX, "--secret-file", secret.toString(),
            "--transport", "udp", "--ports", "4", "--base-port", Integer.toString(basePort), "--warmup", "0",
            "-o", work.resolve(name + ".json").toString()));
        args.addAll(List.of(extra));
        return start(lab.ns("tx1"), args.toArray(String[]::new));
    }

    private void await(String what, BooleanSupplier condition, long timeoutMs) {
        Await.until(what, timeoutMs, condition, () -> "the server said:\n" + (server == null ? "" : server.output()));
    }

    /** The switch's data counters: packets to the server's host and from it. */
    record Data(long toRx, long fromRx) {
    }

    private Data data() {
        try {
            String[] f = lab.run("data").output().strip().split("\\s+");
            return new Data(Long.parseLong(f[0]), Long.parseLong(f[1]));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** When each direction's data last moved after {@code faultNs}, in ms (0 when it never moved after it). */
    record Stopped(long toRxMs, long fromRxMs, Data at) {
        long latestMs() {
            return Math.max(toRxMs, fromRxMs);
        }
    }

    private Stopped lastMoves(long faultNs) {
        Data last = data();
        long toMove = faultNs;
        long fromMove = faultNs;
        long deadline = faultNs + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() - Math.max(toMove, fromMove) < TimeUnit.MILLISECONDS.toNanos(QUIET_MS)) {
            assertThat(System.nanoTime()).as("the data stops within 30 s of the fault").isLessThan(deadline);
            LockSupport.parkNanos(20_000_000L);
            Data now = data();
            long t = System.nanoTime();
            if (now.toRx() != last.toRx()) {
                toMove = t;
            }
            if (now.fromRx() != last.fromRx()) {
                fromMove = t;
            }
            last = now;
        }
        Stopped s = new Stopped(TimeUnit.NANOSECONDS.toMillis(toMove - faultNs),
            TimeUnit.NANOSECONDS.toMillis(fromMove - faultNs), last);
        System.out.println("after the fault: data to the server's host last moved at " + s.toRxMs()
            + " ms, from it at " + s.fromRxMs() + " ms (" + last + ")");
        return s;
    }

    private static void kill(Running r) throws Exception {
        assertThat(new ProcessBuilder("kill", "-KILL", Long.toString(r.process().pid())).start()
            .waitFor(5, TimeUnit.SECONDS)).isTrue();
        assertThat(r.process().waitFor(10, TimeUnit.SECONDS)).as("killed").isTrue();
    }

    private RunResult result(String name) throws IOException {
        return ResultFiles.read(work.resolve(name + ".json"));
    }

    /**
     * The server killed in the second step of a stream run: the controller stops sending at once, exits 1, and its
     * file holds the completed first step, the run failed, and an error naming the step that was running. A serve
     * started again at once takes the next run on the same ports.
     */
    @org.junit.jupiter.api.Test
    @Order(3)
    void serverKilledMidStep() throws Exception {
        Running run = controller("server-killed", "--levels", "2k,2k", "--duration", "3s");
        await("the first step's row printed", () -> run.lines().stream().anyMatch(l -> l.matches("udp\\s+64B\\s+2k.*")),
            60_000);
        Data inStep = data();
        await("data flowing in the second step", () -> data().toRx() > inStep.toRx() + 1_000, 10_000);
        long fault = System.nanoTime();
        kill(server);
        Stopped s = lastMoves(fault);
        assertThat(s.toRxMs()).as("ms from the server's death to the controller's last data packet")
            .isLessThanOrEqualTo(CLOSED_BOUND_MS);
        assertThat(run.process().waitFor(20, TimeUnit.SECONDS)).as("the controller ended").isTrue();
        assertThat(run.process().exitValue()).as(run.output()).isEqualTo(1);
        RunResult r = result("server-killed");
        assertThat(r.status()).hasToString("failed");
        assertThat(r.steps()).extracting(StepResult::step).containsExactly(0);
        Lab.sentItsSchedule(r.steps().get(0), 6_000);
        assertThat(r.error()).startsWith("udp step 1 at 2k/s (64 B) failed: ");
        // A serve restarted at once takes the next run at once, on the same control port and the same data ports.
        server = start(lab.ns("rx"), "serve", "--bind", RX, "--secret-file", secret.toString());
        await("the restarted serve listening", () -> server.printed("listening on"), 60_000);
        Running next = controllerOn(basePortOf(r), "after-restart", "--levels", "1k", "--duration", "500ms");
        assertThat(next.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(next.process().exitValue()).as(next.output()).isZero();
        assertThat(result("after-restart").status()).hasToString("complete");
    }

    private static int basePortOf(RunResult r) {
        return r.plan().basePort();
    }

    /**
     * The controller killed during a step in which the server sends (reverse) or answers (echo): the server stops
     * at once (its control connection closed), says so, and takes the next run.
     */
    @ParameterizedTest
    @ValueSource(strings = {"--reverse", "echo"})
    @Order(1)
    void controllerKilledMidStep(String mode) throws Exception {
        int closedBefore = closedSessions();
        Running run = controller("controller-killed", modeArgs(mode, "--levels", "2k", "--duration", "20s"));
        await("data both ways", () -> {
            Data d = data();
            return d.fromRx() > 2_000 && (mode.equals("--reverse") || d.toRx() > 2_000);
        }, 60_000);
        long fault = System.nanoTime();
        kill(run);
        Stopped s = lastMoves(fault);
        assertThat(s.latestMs()).as("ms from the controller's death to either side's last data packet")
            .isLessThanOrEqualTo(CLOSED_BOUND_MS);
        await("the server says the session closed", () -> closedSessions() > closedBefore, 10_000);
        Running next = controller("after", "--levels", "1k", "--duration", "500ms");
        assertThat(next.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(next.process().exitValue()).as(next.output()).isZero();
        assertThat(result("after").status()).hasToString("complete");
    }

    /**
     * The control connection cut at the switch (no FIN, no RST) mid-step, in each mode: whoever was sending stops
     * within the silence bound, the controller exits 1 with the reason in its file as soon as it gives up (its
     * goodbyes do not wait out the control timeout), and the server ends the session after the same silence, says
     * so, and takes the next run on the same ports.
     */
    @ParameterizedTest
    @ValueSource(strings = {"stream", "--reverse", "echo"})
    @Order(2)
    void controlConnectionCutMidStep(String mode) throws Exception {
        long silentBefore = server.lines().stream().filter(l -> l.contains("the controller was silent")).count();
        int basePort = 47600 + 10 * runs++;
        Running run = controllerOn(basePort, "cut", modeArgs(mode, "--levels", "2k", "--duration", "20s"));
        await("data flowing", () -> {
            Data d = data();
            return mode.equals("--reverse") ? d.fromRx() > 2_000 : d.toRx() > 2_000;
        }, 60_000);
        java.util.concurrent.atomic.AtomicLong exitNs = new java.util.concurrent.atomic.AtomicLong();
        run.process().onExit().thenRun(() -> exitNs.set(System.nanoTime()));
        long fault = System.nanoTime();
        assertThat(lab.run("cut-control").exit()).isZero();
        Stopped s = lastMoves(fault);
        assertThat(s.latestMs()).as("ms from the cut to either side's last data packet")
            .isLessThanOrEqualTo(SILENT_BOUND_MS);
        assertThat(run.process().waitFor(30, TimeUnit.SECONDS)).as("the controller ended").isTrue();
        await("the exit seen", () -> exitNs.get() != 0, 5_000);
        long exitedMs = TimeUnit.NANOSECONDS.toMillis(exitNs.get() - fault);
        System.out.println("after the cut (" + mode + "): the controller exited at " + exitedMs + " ms");
        assertThat(run.process().exitValue()).as(run.output()).isEqualTo(1);
        // The silence bound, and a JVM's exit: no goodbye waits out the 10 s control timeout after the cut.
        assertThat(exitedMs).as("ms from the cut to the controller's exit")
            .isLessThanOrEqualTo(SILENT_BOUND_MS + 1_500);
        RunResult r = result("cut");
        assertThat(r.status()).hasToString("failed");
        assertThat(r.error()).startsWith("udp step 0 at 2k/s (64 B) failed: ").contains("did not answer");
        await("the server says why it ended the session", () -> server.lines().stream()
            .filter(l -> l.contains("the controller was silent")).count() > silentBefore, 10_000);
        assertThat(lab.counters().get("cut").asLong()).as("the switch dropped control segments").isPositive();
        // The path is back: the next run on the same ports runs at once (the silent session's receivers are gone).
        assertThat(lab.run("clear").exit()).isZero();
        Running next = controllerOn(basePort, "after-cut", modeArgs(mode, "--levels", "1k", "--duration", "500ms"));
        assertThat(next.process().waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(next.process().exitValue()).as(next.output()).isZero();
        assertThat(result("after-cut").status()).hasToString("complete");
    }

    private int closedSessions() {
        return (int) server.lines().stream().filter(l -> l.matches(".*session \\d+ from .* closed.*")).count();
    }

    private static String[] modeArgs(String mode, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        if (mode.equals("--reverse")) {
            all.add("--reverse");
        } else if (mode.equals("echo")) {
            all.addAll(List.of("--mode", "echo"));
        }
        return all.toArray(String[]::new);
    }
}
