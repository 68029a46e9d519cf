package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.result.ReceiverResult;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A multicast run's robustness in the lab ({@code scripts/lab.sh mcast 3}), nftables on each receiver's link the
 * ground truth (docs/multicast.md): IPv6 groups (ff15::/16, MLDv2 joins, any-source and source-specific) exact per
 * receiver as IPv4 is; a serve killed (its process, in its namespace) during a step or between steps is a receiver
 * lost to the run, counted as losing everything sent from then on, while the others' figures stay exact; a run
 * whose every receiver is gone stops sending; a receiver that cannot join is refused before any traffic. Its own
 * lab, prefix {@code MCAST6_LAB_PREFIX} (default {@code l6-}). Needs root, iproute2 and nftables; skipped elsewhere.
 */
@Tag("system")
@Tag("lab")
@LabLanes.Second
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class MulticastRobustLabSystemTest {
    private static final int RECEIVERS = 3;
    private static final int SIZE = 64;
    private static final int RATE = 20_000;
    private Lab lab;
    private Path work;
    private Path secret;
    /** Each receiver's serve (index 0 is lp-mr1's), started afresh for every test. */
    private final Process[] serves = new Process[RECEIVERS];

    @BeforeAll
    void upLab() throws Exception {
        lab = Lab.assumed("MCAST6_LAB_PREFIX", "l6-");
        assertThat(lab.run("up", "1").exit()).isZero();
        Lab.Exec mcast = lab.run("mcast", Integer.toString(RECEIVERS));
        assertThat(mcast.exit()).as(mcast.output()).isZero();
        work = Files.createTempDirectory("lossprobe-mcast-robust");
        secret = work.resolve("secret");
        io.lossprobe.control.Auth.writeNewSecret(secret);
    }

    @AfterAll
    void downLab() throws Exception {
        if (lab != null) {
            lab.down();
        }
    }

    @BeforeEach
    void clearRules() throws Exception {
        assertThat(lab.run("clear").exit()).isZero();
    }

    @AfterEach
    void stopServes() throws Exception {
        for (int i = 0; i < RECEIVERS; i++) {
            if (serves[i] != null) {
                serves[i].destroy();
                if (!serves[i].waitFor(10, TimeUnit.SECONDS)) {
                    serves[i].destroyForcibly();
                }
                // Gone before the next test binds its address and port again (a busy machine is slow to end one).
                assertThat(serves[i].waitFor(60, TimeUnit.SECONDS)).as("serve %d ended", i + 1).isTrue();
                serves[i] = null;
            }
        }
    }

    /** A serve in each receiver's namespace, bound to its address of {@code v6}'s family; once all listen. */
    private void startServes(boolean v6) throws Exception {
        for (int i = 1; i <= RECEIVERS; i++) {
            serves[i - 1] = Lab.startServe(lab.ns("mr" + i), receiver(i, v6), secret);
        }
        for (Process p : serves) {
            Lab.awaitListening(p);
        }
    }

    private static String receiver(int i, boolean v6) {
        return v6 ? "2001:2::" + (100 + i) : "198.18.0." + (100 + i);
    }

    /** The multicast run's command line in the sender's namespace, every receiver given, with no warm-up. */
    private List<String> run(Path out, String group, boolean v6, String levels, String basePort, String... args) {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", lab.ns("tx1")));
        cmd.addAll(Lab.java());
        cmd.addAll(List.of("run", "--multicast", group, "--secret-file", secret.toString(), "-o", out.toString(),
            "--transport", "udp", "--levels", levels, "--duration", "1s", "--warmup", "0", "--ports", "4",
            "--base-port", basePort));
        for (int i = 1; i <= RECEIVERS; i++) {
            cmd.addAll(List.of("--receiver", v6 ? "[" + receiver(i, true) + "]" : receiver(i, false)));
        }
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** Datagrams in an nftables count of {@code SIZE}-byte ones (IP and UDP headers off each packet). */
    private static long datagrams(JsonNode count, boolean v6) {
        int headers = v6 ? 48 : 28;
        long packets = count.get("packets").asLong();
        long bytes = count.get("bytes").asLong();
        assertThat((bytes - headers * packets) % SIZE).as("whole datagrams in %s", count).isZero();
        return (bytes - headers * packets) / SIZE;
    }

    private JsonNode link(int i) throws Exception {
        return lab.counters().get("mcast").get(lab.ns("mr" + i));
    }

    /**
     * IPv6: group ff15::4c50, the serves bound to their 2001:2:: addresses join with MLDv2 (any-source, or for the
     * sender's address only). One receiver's link drops 1 %: its loss is exactly what nftables dropped, the others'
     * 0, and each received exactly what arrived at its link less what its sockets dropped.
     */
    @ParameterizedTest(name = "udp.send={0} {2}")
    @CsvSource({"native, 29400, any source", "netty, 29410, --source 2001:2::11",
        "netty, 29420, any source", "native, 29430, --source 2001:2::11"})
    void ipv6GroupsAreExactPerReceiver(String send, String basePort, String source) throws Exception {
        startServes(true);
        assertThat(lab.run("mcast-loss", lab.ns("mr2"), "1").exit()).isZero();
        Path out = work.resolve("mcast6-" + send + "-" + basePort + ".json");
        List<String> args = new ArrayList<>(List.of("--quiet", "-X", "udp.send=" + send));
        if (source.startsWith("--source")) {
            args.addAll(List.of(source.split(" ")));
        }
        Lab.Exec e = Lab.exec(run(out, "ff15::4c50", true, "20k", basePort, args.toArray(String[]::new)));
        assertThat(e.exit()).as(e.output()).isZero();
        StepResult step = ResultFiles.read(out).steps().get(0);
        assertThat(step.receivers()).extracting(ReceiverResult::receiver)
            .containsExactly(receiver(1, true), receiver(2, true), receiver(3, true));
        for (int i = 1; i <= RECEIVERS; i++) {
            ReceiverResult rx = step.receivers().get(i - 1);
            JsonNode link = link(i);
            long dropped = datagrams(link.get("dropped"), true);
            // A starved sender (a busy machine) may send fewer: every receiver was sent the same, exactly counted.
            assertThat(rx.counts().sent()).as("%s sent", rx.receiver()).isEqualTo(step.receivers().get(0).counts()
                .sent()).isPositive();
            MulticastLabSystemTest.exact(rx);
            if (i == 2 && rx.counts().sent() >= RATE / 2) {
                assertThat(dropped).as("dropped on %s's link", rx.receiver()).isPositive();
            } else if (i != 2) {
                assertThat(dropped).as("dropped on %s's link", rx.receiver()).isZero();
            }
            assertThat(rx.counts().lost()).as("%s lost", rx.receiver()).isEqualTo(dropped);
            assertThat(rx.counts().received() + rx.socketDrops()).as("%s received", rx.receiver())
                .isEqualTo(datagrams(link.get("arrived"), true));
        }
        assertThat(step.worstReceiver()).isEqualTo(receiver(2, true));
    }

    /**
     * A serve killed while a step's datagrams flow: from that step on it is gone, every message sent counted lost to
     * it; the run goes on with the other two, whose figures over the whole run (one with 1 % dropped on its link)
     * are exactly what nftables saw at their links. The run says so as it happens, and exits 1; check fails.
     */
    @Test
    void aServeKilledDuringAStepIsAReceiverThatLostEverythingAndTheOthersStayExact() throws Exception {
        startServes(false);
        assertThat(lab.run("mcast-loss", lab.ns("mr3"), "1").exit()).isZero();
        Path out = work.resolve("killed-during.json");
        Running r = Running.start(run(out, "239.255.0.1", false, "20k,20k,20k", "29440", "--quiet"));
        // Step 1's window is under way once more than step 0's datagrams arrived at the receiver's link.
        r.await(line -> line.startsWith("udp ") && line.contains(" 64B "), "step 0's row");
        awaitArrived(2, RATE + RATE / 4);
        serves[1].destroyForcibly();
        Lab.Exec e = r.end();
        assertThat(e.exit()).as(e.output()).isEqualTo(1);
        RunResult run = ResultFiles.read(out);
        // Killed in step 1's window, gone there, or in step 2 when a busy machine was slow to end the serve.
        int from = (int) run.steps().stream().filter(s -> s.receivers().get(1).gone() == null).count();
        assertThat(from).isBetween(1, 2);
        assertThat(e.output()).contains("lossprobe: warning: receiver 198.18.0.102 is gone (during udp step " + from
            + ": ").contains("1 receiver(s) lost during the run");
        lostFrom(run, 2, from);
        othersExact(run, 2);
        failsCheck(out, from);
    }

    /**
     * A serve killed between steps (the controller held still after step 0's row, with SIGSTOP, until the serve's
     * process ended): lost at the start of step 1.
     */
    @Test
    void aServeKilledBetweenStepsIsLostFromTheNextStep() throws Exception {
        startServes(false);
        assertThat(lab.run("mcast-loss", lab.ns("mr3"), "1").exit()).isZero();
        Path out = work.resolve("killed-between.json");
        Running r = Running.start(run(out, "239.255.0.1", false, "20k,20k,20k", "29450", "--quiet"));
        r.await(line -> line.startsWith("udp ") && line.contains(" 64B "), "step 0's row");
        assertThat(Lab.exec("kill", "-STOP", Long.toString(r.process.pid())).exit()).isZero();
        try {
            serves[1].destroyForcibly();
            assertThat(serves[1].waitFor(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            assertThat(Lab.exec("kill", "-CONT", Long.toString(r.process.pid())).exit()).isZero();
        }
        Lab.Exec e = r.end();
        assertThat(e.exit()).as(e.output()).isEqualTo(1);
        assertThat(e.output()).contains("lossprobe: warning: receiver 198.18.0.102 is gone (");
        RunResult run = ResultFiles.read(out);
        lostFrom(run, 2, 1);
        othersExact(run, 2);
    }

    /** Every serve killed during a step: the run ends there with one line, and nothing more is sent. */
    @Test
    void aRunWhoseEveryReceiverIsGoneStopsSending() throws Exception {
        startServes(false);
        Path out = work.resolve("all-gone.json");
        Running r = Running.start(run(out, "239.255.0.1", false, "20k,20k,20k,20k,20k", "29460", "--quiet"));
        // Killed as soon as step 0's row is out (step 1 under way): polling the lab's counters for a count first
        // took so long on a busy machine that the run was two steps further when the kill came.
        r.await(line -> line.startsWith("udp ") && line.contains(" 64B "), "step 0's row");
        for (Process p : serves) {
            p.destroyForcibly();
        }
        Lab.Exec e = r.end();
        assertThat(e.exit()).as(e.output()).isEqualTo(1);
        assertThat(e.output()).contains("every receiver is gone, so nothing more is sent");
        long arrived = datagrams(link(1).get("arrived"), false);
        RunResult run = ResultFiles.read(out);
        assertThat(run.status().json()).isEqualTo("failed");
        // Sent: the steps completed and the one the serves died in, never the rest of the plan's five.
        assertThat(run.steps().size()).isBetween(1, 3);
        assertThat(arrived).as("datagrams sent to the group").isLessThanOrEqualTo((run.steps().size() + 1L) * RATE)
            .isLessThan(5L * RATE);
        // Nothing more comes once the run ended.
        assertThat(datagrams(link(1).get("arrived"), false)).isEqualTo(arrived);
    }

    /**
     * A receiver whose interface cannot join (multicast off on its eth0, or a serve bound to the wildcard in a host
     * with no multicast interface) refuses the run before any traffic, with a line naming the receiver.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"bound to its address", "bound to 0.0.0.0"})
    void aReceiverThatCannotJoinIsRefusedBeforeTraffic(String how) throws Exception {
        assertThat(Lab.exec("ip", "-n", lab.ns("mr3"), "link", "set", "eth0", "multicast", "off").exit()).isZero();
        try {
            serves[0] = Lab.startServe(lab.ns("mr1"), receiver(1, false), secret);
            serves[1] = Lab.startServe(lab.ns("mr2"), receiver(2, false), secret);
            serves[2] = Lab.startServe(lab.ns("mr3"), how.endsWith("0.0.0.0") ? "0.0.0.0" : receiver(3, false),
                secret);
            for (Process p : serves) {
                Lab.awaitListening(p);
            }
            Lab.Exec e = Lab.exec(run(work.resolve("refused.json"), "239.255.0.1", false, "20k", "29470",
                "--quiet"));
            assertThat(e.exit()).as(e.output()).isEqualTo(1);
            List<String> lines = e.output().strip().lines().toList();
            assertThat(lines).as("the run's announcement and its end").hasSizeLessThanOrEqualTo(2);
            assertThat(lines.get(lines.size() - 1)).startsWith("lossprobe: receiver 198.18.0.103:7400: ")
                .contains(how.endsWith("0.0.0.0") ? "no interface up and multicast-capable"
                    : "interface 'eth0' (it holds the bind address 198.18.0.103) is not multicast-capable");
            for (int i = 1; i <= RECEIVERS; i++) {
                assertThat(datagrams(link(i).get("arrived"), false)).as("arrived at receiver %d", i).isZero();
            }
        } finally {
            Lab.exec("ip", "-n", lab.ns("mr3"), "link", "set", "eth0", "multicast", "on");
        }
    }

    /**
     * Until about {@code datagrams} arrived at the receiver's link: read while traffic flows, an nftables counter's
     * packets and bytes need not be of one moment, so this reads its bytes alone.
     */
    private void awaitArrived(int receiver, long datagrams) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (link(receiver).get("arrived").get("bytes").asLong() < datagrams * (SIZE + 28)) {
            assertThat(System.nanoTime()).as("%d datagrams at receiver %d's link", datagrams, receiver)
                .isLessThan(deadline);
        }
    }

    /** Receiver {@code lost} (from 1) took part exactly up to step {@code from}, and lost all of every step after. */
    private static void lostFrom(RunResult run, int lost, int from) {
        assertThat(run.steps()).hasSize(3);
        for (StepResult s : run.steps()) {
            ReceiverResult rx = s.receivers().get(lost - 1);
            MulticastLabSystemTest.exact(rx);
            if (s.step() < from) {
                assertThat(rx.gone()).isNull();
                // No loss on its link: what it lost, its sockets dropped (none on a machine with CPU to spare).
                assertThat(rx.counts().lost()).isEqualTo(rx.socketDrops());
            } else {
                assertThat(rx.gone()).as("step %d", s.step()).isNotNull();
                assertThat(rx.counts().received()).isZero();
                assertThat(rx.counts().lost()).isEqualTo(rx.counts().sent()).isPositive();
                assertThat(s.worstReceiver()).isEqualTo(rx.receiver());
                assertThat(s.counts()).isEqualTo(rx.counts());
                assertThat(s.warnings()).anyMatch(w -> w.startsWith("receiver " + rx.receiver() + " is gone ("));
            }
        }
    }

    /** Every receiver but {@code lost}, over the run: lost what its link dropped, received what arrived there. */
    private void othersExact(RunResult run, int lost) throws Exception {
        for (int i = 1; i <= RECEIVERS; i++) {
            if (i == lost) {
                continue;
            }
            long sent = 0;
            long received = 0;
            long lostSum = 0;
            long drops = 0;
            for (StepResult s : run.steps()) {
                ReceiverResult rx = s.receivers().get(i - 1);
                assertThat(rx.gone()).isNull();
                MulticastLabSystemTest.exact(rx);
                sent += rx.counts().sent();
                received += rx.counts().received();
                lostSum += rx.counts().lost();
                drops += rx.socketDrops();
            }
            JsonNode link = link(i);
            long dropped = datagrams(link.get("dropped"), false);
            if (i == 3) {
                assertThat(dropped).as("dropped on receiver %d's link", i).isPositive();
            } else {
                assertThat(dropped).as("dropped on receiver %d's link", i).isZero();
            }
            assertThat(lostSum).as("receiver %d lost", i).isEqualTo(dropped);
            assertThat(received + drops).as("receiver %d received", i).isEqualTo(datagrams(link.get("arrived"),
                false));
            assertThat(received + lostSum).isEqualTo(sent);
        }
    }

    /** {@code lossprobe check} with a policy that allows any loss still fails the steps with a receiver gone. */
    private void failsCheck(Path results, int from) throws Exception {
        Path policy = work.resolve("any-loss.json");
        Files.writeString(policy, "{\"defaults\": {\"maxLossPercent\": 100}}");
        List<String> cmd = new ArrayList<>(Lab.java());
        cmd.addAll(List.of("check", results.toString(), "--policy", policy.toString()));
        Lab.Exec e = Lab.exec(cmd);
        assertThat(e.exit()).as(e.output()).isEqualTo(1);
        assertThat(e.output()).contains("receivers: 1 of 3 gone").contains("198.18.0.102 (during udp step " + from);
    }

    /** A command running, its output read line by line as it comes. */
    private static final class Running {
        private final Process process;
        private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final StringBuffer all = new StringBuffer();
        private final Thread reader;

        private Running(Process process) {
            this.process = process;
            this.reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = in.readLine()) != null) {
                        all.append(line).append('\n');
                        lines.add(line);
                    }
                } catch (java.io.IOException e) {
                    // The command ended.
                }
            });
            reader.setDaemon(true);
            reader.start();
        }

        static Running start(List<String> cmd) throws Exception {
            return new Running(new ProcessBuilder(cmd).redirectErrorStream(true).start());
        }

        void await(Predicate<String> wanted, String what) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                assertThat(line).as("%s within 60 s, after: %s", what, all).isNotNull();
                if (wanted.test(line)) {
                    return;
                }
            }
        }

        /** Waits for the command's end and all its output. */
        Lab.Exec end() throws InterruptedException {
            assertThat(process.waitFor(3, TimeUnit.MINUTES)).isTrue();
            reader.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(reader.isAlive()).isFalse();
            return new Lab.Exec(process.exitValue(), all.toString());
        }
    }
}
