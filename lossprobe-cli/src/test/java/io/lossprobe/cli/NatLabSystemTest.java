package io.lossprobe.cli;

import static io.lossprobe.cli.Lab.RX;
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
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A controller behind a NAT ({@code scripts/lab.sh nat}): {@code run --target --reverse} and {@code --bidir} from
 * the lab's controller namespace, whose router masquerades it and lets back in only what conntrack maps to a way
 * the controller opened, against {@code lossprobe serve} in the receiver namespace. The router's nftables counters
 * are the ground truth: nothing the server sent was dropped for want of a mapping ({@code unmapped}), and with the
 * router dropping 1 % of the UDP it forwards in ({@code lab.sh nat-loss}) the reverse steps' {@code lost} is exactly
 * the datagrams it dropped. Its own lab, prefix {@code NAT_LAB_PREFIX} (default {@code ln-}). Needs root, iproute2
 * and nftables; skipped elsewhere.
 */
@Tag("system")
@Tag("lab")
@LabLanes.First
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class NatLabSystemTest {
    private static final String NAT_ADDRESS = "198.18.0.250";
    private static final int SIZE = 64;
    /** The lab under NAT_LAB_PREFIX (default ln-). */
    private Lab lab;
    private Path work;
    private Path secret;

    @BeforeAll
    void upLab() throws Exception {
        lab = Lab.assumed("NAT_LAB_PREFIX", "ln-");
        assertThat(lab.run("up", "1").exit()).isZero();
        Lab.Exec nat = lab.run("nat");
        assertThat(nat.exit()).as(nat.output()).isZero();
        work = Files.createTempDirectory("lossprobe-nat-lab");
        secret = work.resolve("secret");
        io.lossprobe.control.Auth.writeNewSecret(secret);
        lab.serve(secret, RX);
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

    /** lossprobe run in the controller's namespace, behind the NAT, with no warm-up: every message is counted. */
    private RunResult run(String name, String... args) throws Exception {
        Path out = work.resolve(name + ".json");
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", lab.ns("ctl")));
        cmd.addAll(Lab.java());
        cmd.addAll(List.of("run", "--target", RX, "--secret-file", secret.toString(), "--quiet", "-o",
            out.toString(), "--levels", "20k", "--duration", "1s", "--warmup", "0", "--ports", "4"));
        cmd.addAll(List.of(args));
        Lab.Exec e = Lab.exec(cmd);
        assertThat(e.exit()).as(e.output()).isZero();
        RunResult r = ResultFiles.read(out);
        for (StepResult s : r.steps()) {
            for (FlowResult f : s.flows()) {
                assertThat(f.counts().received() + f.counts().lost()).isEqualTo(f.counts().sent());
            }
        }
        return r;
    }

    private JsonNode nat() throws Exception {
        return lab.counters().get("nat");
    }

    /** The steps of {@code direction}: in a {@code --reverse} run (which marks none) every step is the reverse's. */
    private static List<StepResult> steps(RunResult r, String direction) {
        return r.steps().stream().filter(s -> s.direction() == null ? direction.equals("reverse")
            : direction.equals(s.direction())).toList();
    }

    /**
     * UDP, on both send paths of the server: every datagram the router let in arrived, and each one it dropped is
     * one lost; the forward half of {@code --bidir} (out through the NAT) loses nothing.
     */
    @ParameterizedTest(name = "udp {0} {1}")
    @CsvSource({
        "--reverse, udp.send=native, 45000",
        "--reverse, udp.send=netty, 45010",
        "--bidir, udp.send=native, 45020",
        "--bidir, udp.send=netty, 45030",
    })
    void udpLossThroughTheNatIsExactlyWhatTheRouterDropped(String direction, String send, String basePort)
        throws Exception {
        assertThat(lab.run("nat-loss", "1").exit()).isZero();
        RunResult r = run("udp" + direction + "-" + send, direction, "--transport", "udp", "-X", send,
            "--base-port", basePort);
        JsonNode nat = nat();
        assertThat(nat.get("unmapped").get("packets").asLong()).as("packets the NAT had no way back in for")
            .isZero();
        List<StepResult> reverse = steps(r, "reverse");
        assertThat(reverse).hasSize(1);
        StepResult back = reverse.get(0);
        Lab.sentItsSchedule(back, 20_000);
        long packets = nat.get("dropped").get("packets").asLong();
        long bytes = nat.get("dropped").get("bytes").asLong();
        assertThat((bytes - 28 * packets) % SIZE).as("whole datagrams in %s", nat.get("dropped")).isZero();
        long dropped = (bytes - 28 * packets) / SIZE;
        assertThat(dropped).as("datagrams the router dropped on the way in").isPositive();
        assertThat(back.counts().lost()).as("reverse lost").isEqualTo(dropped);
        assertThat(back.counts().foreign()).isZero();
        if (direction.equals("--bidir")) {
            List<StepResult> forward = steps(r, "forward");
            assertThat(forward).hasSize(1);
            Lab.sentItsSchedule(forward.get(0), 20_000);
            assertThat(forward.get(0).counts().lost()).as("forward lost (out through the NAT)").isZero();
            assertThat(forward.get(0).counts().foreign()).isZero();
        }
    }

    /**
     * Reliable Aeron through the NAT with the router dropping 1 % of what it forwards in: every drop is repaired
     * (NAKs go out through the NAT on the way the status messages opened), nothing is lost.
     */
    @org.junit.jupiter.api.Test
    void reliableAeronRepairsWhatTheRouterDropsOnTheWayIn() throws Exception {
        assertThat(lab.run("nat-loss", "1").exit()).isZero();
        RunResult r = run("aeron-loss", "--reverse", "--transport", "aeron", "--base-port", "45080");
        JsonNode nat = nat();
        assertThat(nat.get("unmapped").get("packets").asLong()).isZero();
        assertThat(nat.get("dropped").get("packets").asLong()).as("packets the router dropped").isPositive();
        StepResult s = steps(r, "reverse").get(0);
        assertThat(s.counts().lost()).isZero();
        assertThat(s.counts().received()).isEqualTo(Lab.sentItsSchedule(s, 20_000));
        long naks = s.flows().stream().mapToLong(f -> f.transport().getOrDefault("aeron.rcvNaksSent", 0L)).sum();
        assertThat(naks).as("NAKs the receivers sent out through the NAT").isPositive();
    }

    /** TCP and Aeron through the NAT: every message arrives both ways, and the router had a way in for all. */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
        "tcp, --reverse, 45040",
        "tcp, --bidir, 45050",
        "aeron, --reverse, 45060",
        "aeron, --bidir, 45070",
    })
    void tcpAndAeronPassThroughTheNat(String transport, String direction, String basePort) throws Exception {
        RunResult r = run(transport + direction, direction, "--transport", transport, "--base-port", basePort);
        JsonNode nat = nat();
        assertThat(nat.get("unmapped").get("packets").asLong()).as("packets the NAT had no way back in for")
            .isZero();
        assertThat(nat.get("in").asLong()).as("packets the NAT forwarded in").isPositive();
        List<String> directions = direction.equals("--bidir") ? List.of("forward", "reverse") : List.of("reverse");
        for (String d : directions) {
            List<StepResult> steps = steps(r, d);
            assertThat(steps).as(d).hasSize(1);
            StepResult s = steps.get(0);
            assertThat(s.counts().sent()).as("%s sent", d).isPositive();
            assertThat(s.counts().received()).as("%s received", d).isEqualTo(s.counts().sent());
            assertThat(s.counts().foreign()).as("%s foreign", d).isZero();
        }
    }

    /**
     * Punches that never reach the server end the run with one line, instead of senders sending blind: a NAT that
     * lets no UDP out names the ports and the address the server saw (the NAT's); this host's own firewall refusing
     * UDP (sendto's EPERM) names the refusal.
     */
    @ParameterizedTest(name = "udp dropped in {0}")
    @CsvSource({
        "nat, forward, 45090, did not reach the server's senders within 5 s (4 of 4 flows; no punch arrived)",
        "ctl, output, 45095, cannot send to the server's senders at " + RX + " port ",
    })
    void punchesThatNeverArriveEndTheRunWithOneLine(String host, String hook, String basePort, String says)
        throws Exception {
        String table = "lossprobe_nat_test";
        assertThat(Lab.exec(List.of("ip", "netns", "exec", lab.ns(host), "nft", "add table inet " + table
            + "; add chain inet " + table + " c { type filter hook " + hook + " priority 0; }; add rule inet "
            + table + " c ip daddr " + RX + " meta l4proto udp counter drop")).exit()).isZero();
        try {
            Path out = work.resolve("blocked-" + host + ".json");
            List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", lab.ns("ctl")));
            cmd.addAll(Lab.java());
            cmd.addAll(List.of("run", "--target", RX, "--secret-file", secret.toString(), "--quiet", "-o",
                out.toString(), "--levels", "20k", "--duration", "1s", "--warmup", "0", "--ports", "4",
                "--reverse", "--transport", "udp", "--base-port", basePort));
            Lab.Exec e = Lab.exec(cmd);
            assertThat(e.exit()).as(e.output()).isNotZero();
            List<String> said = e.output().lines().filter(l -> l.contains(says)).toList();
            assertThat(said).as(e.output()).hasSize(1);
            if (host.equals("nat")) {
                assertThat(said.get(0)).contains("to " + RX + " ports ")
                    .endsWith("(the server sees this host as " + NAT_ADDRESS + ", not 198.18.1.2: a NAT on the way)");
            } else {
                assertThat(said.get(0)).endsWith(": Operation not permitted (is this host's firewall refusing UDP"
                    + " to it?)");
            }
            assertThat(e.output()).doesNotContain("\tat ");
        } finally {
            Lab.exec(List.of("ip", "netns", "exec", lab.ns(host), "nft", "delete table inet " + table));
        }
    }
}
