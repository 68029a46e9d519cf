package io.lossprobe.cli;

import static io.lossprobe.cli.Lab.RX;
import static io.lossprobe.cli.Lab.RX6;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Traffic classes between two hosts for real ({@code --dscp}): {@code lossprobe serve} in the lab's receiver
 * namespace, {@code run --target} in a sender's (scripts/lab.sh), with nftables counting what arrives per DSCP
 * ({@code lab.sh count-dscp}) and a switch that re-marks a class ({@code lab.sh remark}). nftables' counters are the
 * ground truth: the datagrams that arrive per class are exactly those lossprobe sent in it, and exactly the flows
 * the switch re-marked are flagged. Its own lab, prefix {@code DSCP_LAB_PREFIX} (default {@code ld-}), so it runs
 * beside the other lab tests. Needs root, iproute2 and nftables; skipped elsewhere.
 */
@Tag("system")
@Tag("lab")
@LabLanes.Second
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class DscpLabSystemTest {
    private static final int SIZE = 64;
    private static final long EF = 46;
    private static final long CS1 = 8;
    /** The lab under DSCP_LAB_PREFIX (default ld-). */
    private Lab lab;
    private Path work;
    private Path secret;

    @BeforeAll
    void upLab() throws Exception {
        lab = Lab.assumed("DSCP_LAB_PREFIX", "ld-");
        assertThat(lab.run("up", "1").exit()).isZero();
        work = Files.createTempDirectory("lossprobe-dscp-lab");
        secret = work.resolve("secret");
        io.lossprobe.control.Auth.writeNewSecret(secret);
        lab.serve(secret, RX, RX6);
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

    record LabRun(RunResult result, String output) {
        StepResult step(String transport) {
            return result.steps().stream().filter(s -> s.transport().equals(transport)).findFirst().orElseThrow();
        }
    }

    /** lossprobe run in the sender namespace against the server, with no warm-up: every datagram is counted. */
    private LabRun run(String name, String... args) throws Exception {
        return runTo(RX, name, args);
    }

    /** {@link #run(String, String...)} against the server at {@code target}: RX, or RX6 over IPv6. */
    private LabRun runTo(String target, String name, String... args) throws Exception {
        Path out = work.resolve(name + ".json");
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", lab.ns("tx1")));
        cmd.addAll(Lab.java());
        cmd.addAll(List.of("run", "--target", target, "--secret-file", secret.toString(), "--quiet", "-o",
            out.toString(), "--levels", "20k", "--duration", "1s", "--warmup", "0"));
        cmd.addAll(List.of(args));
        Lab.Exec e = Lab.exec(cmd);
        assertThat(e.exit()).as(e.output()).isZero();
        RunResult r = ResultFiles.read(out);
        for (StepResult s : r.steps()) {
            for (FlowResult f : s.flows()) {
                assertThat(f.counts().received() + f.counts().lost()).isEqualTo(f.counts().sent());
            }
        }
        return new LabRun(r, e.output());
    }

    /** UDP datagrams of {@link #SIZE} bytes in a packets-and-bytes counter (a GSO packet carries several). */
    private static long datagrams(JsonNode counter) {
        return datagrams(counter, RX);
    }

    /** {@link #datagrams(JsonNode)} of traffic to {@code target} (48 bytes of headers a packet over IPv6). */
    private static long datagrams(JsonNode counter, String target) {
        long packets = counter.get("packets").asLong();
        long bytes = counter.get("bytes").asLong();
        long headers = Lab.udpHeaderBytes(target);
        assertThat((bytes - headers * packets) % SIZE).as("whole datagrams in %s", counter).isZero();
        return (bytes - headers * packets) / SIZE;
    }

    private static long sentIn(StepResult s, long dscp) {
        return s.flows().stream().filter(f -> f.transport().get("udp.dscpSent") == dscp)
            .mapToLong(f -> f.counts().sent()).sum();
    }

    /** IPv4 (the TOS byte) and IPv6 (the traffic class): the same classes, counted by the same rules. */
    @ParameterizedTest(name = "{0} to {1}")
    @CsvSource({
        "native send path with GSO, " + RX + ", 49200, udp.send=native, udp.gso=on",
        "Netty send path without GSO, " + RX + ", 49220, udp.send=netty, udp.gso=off",
        "native send path with GSO, " + RX6 + ", 52760, udp.send=native, udp.gso=on",
        "Netty send path without GSO, " + RX6 + ", 52780, udp.send=netty, udp.gso=off",
    })
    void eachClassArrivesWithExactlyTheDatagramsSentInIt(String path, String target, String basePort, String send,
                                                         String gso) throws Exception {
        assertThat(lab.run("count-dscp", "ef", "cs1", "cs0").exit()).isZero();
        LabRun run = runTo(target, "classes-" + send + "-" + basePort, "--transport", "udp", "--ports", "4",
            "--base-port", basePort, "--dscp", "EF,CS1", "-X", send, "-X", gso);
        StepResult s = run.step("udp");
        assertThat(run.result().plan().bindAddress()).isEqualTo(target);
        JsonNode dscp = lab.counters().get("dscp");
        assertThat(sentIn(s, EF)).as("flows 0 and 2 sent EF").isPositive();
        assertThat(datagrams(dscp.get("ef"), target)).as("EF datagrams nftables counted at the receiving host")
            .isEqualTo(sentIn(s, EF));
        assertThat(datagrams(dscp.get("cs1"), target)).as("CS1 datagrams nftables counted")
            .isEqualTo(sentIn(s, CS1));
        assertThat(dscp.get("cs0").get("packets").asLong()).as("no data arrived unmarked").isZero();
        if (gso.equals("udp.gso=off")) {
            assertThat(dscp.get("ef").get("packets").asLong()).as("a packet a datagram").isEqualTo(sentIn(s, EF));
        }
        for (FlowResult f : s.flows()) {
            long sent = f.flow() % 2 == 0 ? EF : CS1;
            assertThat(f.transport()).as("flow %d", f.flow()).containsEntry("udp.dscpSent", sent)
                .containsEntry("udp.dscpAsSent", f.counts().received()).containsEntry("udp.dscpRemarked", 0L)
                .containsEntry("udp.dscpUnread", 0L).containsEntry("udp.dscpSeen", 1L << sent);
        }
        assertThat(run.output()).contains("verdict: udp: every flow arrived in the class it was sent with (CS1, EF)");
        assertThat(run.result().plan().dscp()).containsExactly(46, 8);
    }

    @Test
    void everyTcpSegmentBothWaysCarriesItsFlowsClass() throws Exception {
        assertThat(lab.run("count-dscp", "af41", "cs0").exit()).isZero();
        LabRun run = run("tcp", "--transport", "tcp", "--ports", "2", "--base-port", "49240", "--dscp", "AF41",
            "--mode", "echo");
        assertThat(run.step("tcp").counts().received()).isPositive();
        JsonNode c = lab.counters();
        for (String direction : List.of("dscp", "dscpFromRx")) {
            JsonNode dscp = c.get(direction);
            assertThat(dscp.get("af41").get("packets").asLong()).as("%s: segments in AF41", direction).isPositive();
            assertThat(dscp.get("cs0").get("packets").asLong()).as("%s: segments unmarked (SYN, SYN-ACK, ACKs, "
                + "replies)", direction).isZero();
        }
    }

    @Test
    void theServerMarksWhatItSendsInAReverseRun() throws Exception {
        assertThat(lab.run("count-dscp", "ef", "cs1", "cs0").exit()).isZero();
        LabRun run = run("reverse", "--transport", "udp", "--ports", "4", "--base-port", "49260", "--dscp",
            "CS1,EF", "--reverse");
        StepResult s = run.step("udp");
        JsonNode fromRx = lab.counters().get("dscpFromRx");
        assertThat(datagrams(fromRx.get("ef"))).as("EF datagrams the server sent").isEqualTo(sentIn(s, EF))
            .isPositive();
        assertThat(datagrams(fromRx.get("cs1"))).as("CS1 datagrams the server sent").isEqualTo(sentIn(s, CS1));
        assertThat(fromRx.get("cs0").get("packets").asLong()).as("no data left the server unmarked").isZero();
        for (FlowResult f : s.flows()) {
            long sent = f.flow() % 2 == 0 ? CS1 : EF;
            assertThat(f.counts().received()).isPositive();
            assertThat(f.transport()).as("flow %d as this host's receiver read it", f.flow())
                .containsEntry("udp.dscpAsSent", f.counts().received()).containsEntry("udp.dscpRemarked", 0L)
                .containsEntry("udp.dscpSeen", 1L << sent);
        }
    }

    @Test
    void aSwitchThatReMarksIsFlaggedOnExactlyTheFlowsItReMarked() throws Exception {
        assertThat(lab.run("count-dscp", "ef", "cs1", "cs0").exit()).isZero();
        assertThat(lab.run("remark", "ef", "cs0").exit()).isZero();
        LabRun run = run("remarked", "--transport", "udp", "--ports", "4", "--base-port", "49280", "--dscp",
            "EF,CS1");
        StepResult s = run.step("udp");
        JsonNode c = lab.counters();
        long remarked = 0;
        for (FlowResult f : s.flows()) {
            if (f.flow() % 2 == 0) {
                assertThat(f.transport()).as("flow %d, EF, re-marked", f.flow())
                    .containsEntry("udp.dscpRemarked", f.counts().received()).containsEntry("udp.dscpAsSent", 0L)
                    .containsEntry("udp.dscpSeen", 1L);
                assertThat(s.warnings()).contains("flow " + f.flow() + " (port " + f.port() + ") sent EF, arrived "
                    + "as CS0 (re-marked): " + f.counts().received() + " of " + f.counts().received() + " datagrams");
                remarked += f.transport().get("udp.dscpRemarked");
            } else {
                assertThat(f.transport()).as("flow %d, CS1, untouched", f.flow())
                    .containsEntry("udp.dscpRemarked", 0L).containsEntry("udp.dscpSeen", 1L << CS1);
            }
        }
        assertThat(remarked).as("what lossprobe flagged is what the switch re-marked")
            .isEqualTo(datagrams(c.get("remarked"))).isEqualTo(datagrams(c.get("dscp").get("cs0")))
            .isEqualTo(sentIn(s, EF));
        assertThat(c.get("dscp").get("ef").get("packets").asLong()).isZero();
        assertThat(s.warnings().stream().filter(w -> w.contains("re-marked"))).hasSize(2);
        assertThat(run.output()).contains("verdict: udp: 2 of 4 flow(s) re-marked on the path: flow 0 sent EF, "
            + "arrived as CS0; flow 2 sent EF, arrived as CS0");
    }
    /**
     * A priority queue on a shaped link: only CS1's band goes through a tbf ({@code lab.sh shape-class cs1}), so the
     * CS1 flows lose exactly what the qdisc dropped and the EF flows lose nothing (their socket drops apart). GSO
     * off: each datagram is one packet at the qdisc, so its drop count is in datagrams.
     */
    @ParameterizedTest(name = "to {0}")
    @CsvSource({RX + ", 49300", RX6 + ", 49320"})
    void aQueueThatShapesOneClassLosesOnThatClasssFlowsOnly(String target, String basePort) throws Exception {
        assertThat(lab.run("shape-class", "cs1", "4mbit", "5ms", "4kb").exit()).isZero();
        LabRun run = runTo(target, "prio-" + basePort, "--transport", "udp", "--ports", "4", "--base-port", basePort,
            "--dscp", "EF,CS1", "-X", "udp.gso=off");
        StepResult s = run.step("udp");
        long qdiscDrops = lab.counters().get("shaped").get("drops").asLong();
        long cs1Lost = 0;
        for (FlowResult f : s.flows()) {
            long kernel = f.socketDrops() == null ? 0 : f.socketDrops();
            if (f.flow() % 2 == 0) {
                assertThat(f.counts().lost()).as("EF flow %d: its socket's drops only", f.flow()).isEqualTo(kernel);
            } else {
                cs1Lost += f.counts().lost() - kernel;
            }
        }
        System.out.println("cs1 shaped, to " + target + ": the qdisc dropped " + qdiscDrops + ", the CS1 flows lost "
            + cs1Lost + " beyond their sockets' drops; EF lost " + s.flows().stream().filter(f -> f.flow() % 2 == 0)
            .mapToLong(f -> f.counts().lost()).sum());
        assertThat(qdiscDrops).as("the CS1 band overflowed").isPositive();
        assertThat(cs1Lost).as("CS1's loss is the qdisc's drops").isEqualTo(qdiscDrops);
    }
}
