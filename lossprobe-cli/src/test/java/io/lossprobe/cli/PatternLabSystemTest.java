package io.lossprobe.cli;

import static io.lossprobe.cli.Lab.RX;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Bursts against a shaper with a small bucket (issue 29): tbf shapes the data into the lab's receiver to 5 Mbit/s
 * with a 2 KiB bucket and a 1 ms queue, about 4.7 KB of room, or 44 datagrams of 64 bytes (106 bytes to tbf). At
 * 3.2k/s (54 % of the 5,896/s the link carries) the constant pattern never fills it; {@code burst:64} at the same
 * average offers 6,784 bytes at once every 20 ms and loses part of every burst. lossprobe's {@code lost} is
 * exactly tbf's drops, and what arrived is exactly what tbf passed.
 */
@Tag("system")
@Tag("lab")
@LabLanes.Second
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PatternLabSystemTest {
    private static final String[] SHAPE = {"shape", "5mbit", "1ms", "2kb"};
    /** A 64-byte message as tbf counts it: Ethernet 14 + IPv4 20 + UDP 8 + 64. */
    private static final int SHAPED_PACKET_BYTES = 14 + 20 + 8 + 64;
    /**
     * The most the constant sender may fall behind for its premise to hold: 10 ms at 3.2k/s bunches 32 datagrams,
     * 3,392 bytes, inside the shaper's 4.7 KB of bucket and queue. A sender starved longer bunched its messages
     * before the shaper, and what it lost measured the host's scheduler, not the pattern.
     */
    private static final long CONSTANT_LAG_NS = 10_000_000;
    private static final int ATTEMPTS = 3;
    /** The lab under LAB_PREFIX (default lp-), so a lab of one's own can run beside others. */
    private Lab lab;
    private Path work;
    private Path secret;

    @BeforeAll
    void upLab() throws Exception {
        lab = Lab.assumed("PATTERN_LAB_PREFIX", "lt-", "tc");
        assertThat(lab.run("up", "1").exit()).isZero();
        work = Files.createTempDirectory("lossprobe-pattern-lab");
        secret = work.resolve("secret");
        io.lossprobe.control.Auth.writeNewSecret(secret);
        lab.serve(secret, RX);
        assertThat(lab.run(SHAPE).exit()).isZero();
    }

    @AfterAll
    void downLab() throws Exception {
        if (lab != null) {
            lab.down();
        }
    }

    private JsonNode shaped() throws Exception {
        JsonNode c = lab.counters().get("shaped");
        assertThat(c).as("the shaper's counters").isNotNull();
        return c;
    }

    /** One step through the shaper and tbf's counters over it (no warm-up: tbf's counters cover the window). */
    record ShapedRun(StepResult step, long passed, long drops, long bytes) {
    }

    private ShapedRun run(String pattern, int attempt) throws Exception {
        JsonNode before = shaped();
        Path out = work.resolve(pattern.replace(':', '-') + "-" + attempt + ".json");
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", lab.ns("tx1")));
        cmd.addAll(Lab.java());
        cmd.addAll(List.of("run", "--target", RX, "--secret-file", secret.toString(), "--quiet", "-o",
            out.toString(), "--transport", "udp", "--ports", "1", "--base-port", "36460", "-X", "udp.gso=off",
            "--levels", "3.2k", "--duration", "2s", "--warmup", "0", "--drain", "300ms", "--pattern", pattern));
        Lab.Exec e = Lab.exec(cmd);
        assertThat(e.exit()).as(e.output()).isZero();
        JsonNode after = shaped();
        RunResult r = ResultFiles.read(out);
        assertThat(r.plan().pattern()).isEqualTo(pattern);
        io.lossprobe.core.contract.TransportContractTest.assertIdentities(r);
        StepResult s = r.steps().get(0);
        ShapedRun run = new ShapedRun(s, after.get("packets").asLong() - before.get("packets").asLong(),
            after.get("drops").asLong() - before.get("drops").asLong(),
            after.get("bytes").asLong() - before.get("bytes").asLong());
        // Exact on every run, whatever the scheduler did: each packet through tbf was one 64-byte datagram, lost
        // is what tbf dropped (the receiving socket dropped nothing), received is what tbf passed.
        assertThat(run.bytes()).as("every packet through the shaper was a 106-byte datagram")
            .isEqualTo(run.passed() * SHAPED_PACKET_BYTES);
        assertThat(s.socketDrops()).as("the receiving socket's drops").isZero();
        assertThat(s.counts().lost()).as("lost against tbf's drops").isEqualTo(run.drops());
        assertThat(s.counts().received()).as("received against tbf's passed").isEqualTo(run.passed());
        Lab.sentItsSchedule(s, 6_400);
        return run;
    }

    @Test
    void burstsOfSixtyFourLoseExactlyWhatTheShaperDroppedWhereTheConstantPatternLosesNothing() throws Exception {
        ShapedRun burst = run("burst:64", 1);
        assertThat(burst.drops()).as("tbf dropped part of the bursts").isPositive();
        assertThat(burst.step().counts().lossEvents()).as("loss in many bursts, not one accident")
            .isGreaterThanOrEqualTo(50);
        List<String> missed = new ArrayList<>();
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            ShapedRun constant = run("constant", attempt);
            long lagMax = constant.step().senderLag().maxNs();
            if (constant.drops() == 0) {
                assertThat(constant.step().counts().lost()).isZero();
                System.out.printf("burst:64 at 3.2k: lost %d = tbf drops %d in %d loss events; constant: lost 0, "
                        + "sender lag max %.1f ms%n", burst.step().counts().lost(), burst.drops(),
                    burst.step().counts().lossEvents(), lagMax / 1e6);
                return;
            }
            // A constant sender that lost kept its schedule only if it was never more than CONSTANT_LAG_NS late.
            assertThat(lagMax).as("the constant pattern lost %d with the sender on time", constant.drops())
                .isGreaterThan(CONSTANT_LAG_NS);
            missed.add("attempt " + attempt + ": lost " + constant.drops() + ", sender lag max " + lagMax + " ns");
        }
        org.junit.jupiter.api.Assumptions.abort("the constant sender never kept its schedule: " + missed);
    }
}
