package io.lossprobe.cli;

import static io.lossprobe.cli.RunCommandTest.execute;
import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.result.Echo;
import io.lossprobe.core.result.ProbeResult;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --probe echo:RATE}: beside every stream step of every transport, an echo flow on the port after the
 * plan's, in the same window, counted apart: the stream's identities and counts are those of a run without it
 * (nothing of the probe's arrives on a stream port), and each step carries the probe's requests, replies and
 * round trip with echo's identities holding; between hosts the same, as two sessions with a {@code serve}. Ports
 * 44720-44731.
 */
@Tag("system")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ProbeRunSystemTest {
    @TempDir
    Path dir;

    @Test
    void everyStreamStepCarriesItsProbesRoundTrip() throws Exception {
        Path out = dir.resolve("probe.json");
        RunCommandTest.Outcome o = execute("run", "--transport", "udp,tcp,aeron", "--ports", "2", "--base-port",
            "44720", "--levels", "4k,8k", "--duration", "500ms", "--warmup", "100ms", "--drain", "300ms",
            "--probe", "echo:500", "-o", out.toString());
        assertThat(o.exit()).as(o.out() + o.err()).isZero();
        assertThat(o.out()).contains("over 2 ports from 127.0.0.1:44720 and an echo probe at 500/s on 44722")
            .contains("      probe: echo 500/s on 44722  rtt p50 ");
        RunResult r = ResultFiles.read(out);
        TransportContractTest.assertIdentities(r);
        assertThat(r.steps()).extracting(StepResult::transport).containsExactly("udp", "udp", "tcp", "tcp",
            "aeron", "aeron");
        for (StepResult s : r.steps()) {
            String what = s.transport() + " at " + s.level();
            // The stream is counted as without the probe: all it scheduled, nothing foreign or corrupt.
            assertThat(s.counts().scheduled()).as(what).isEqualTo(s.targetRate() / 2);
            assertThat(s.counts().corrupt() + s.counts().foreign()).as(what).isZero();
            assertThat(s.counts().lost()).as(what).isEqualTo(s.socketDrops() == null ? 0 : s.socketDrops());
            assertThat(s.echo()).as("a stream step is not echo's").isNull();
            ProbeResult p = s.probe();
            assertThat(p).as(what).isNotNull();
            assertThat(p.mode()).isEqualTo(ProbeResult.ECHO);
            assertThat(p.ratePerSecond()).isEqualTo(500);
            assertThat(p.port()).isEqualTo(44722);
            Echo e = p.echo();
            assertThat(e.identitiesHold()).as(what).isTrue();
            // 500/s for 500 ms: 250 scheduled; a sender starved at the window's end may have sent fewer.
            assertThat(e.requestsSent()).as(what).isBetween(1L, 250L);
            assertThat(e.requestsSent() + p.behind()).as(what).isLessThanOrEqualTo(250);
            assertThat(e.repliesReceived()).as(what).isPositive();
            assertThat(e.rtt().count()).as(what).isEqualTo(e.repliesReceived());
        }
    }

    /**
     * Forward to a serve, then in reverse (the server sends the stream to this host): the stream's session and the
     * probe's, whose requests the server answers, in both.
     */
    @Test
    void runsToAServeCarryTheirProbeForwardAndInReverse() throws Exception {
        String secret = "a probe test secret of 32 bytes or more";
        java.nio.file.Path secretFile = java.nio.file.Files.writeString(dir.resolve("secret"), secret + "\n");
        java.io.StringWriter log = new java.io.StringWriter();
        try (io.lossprobe.control.ControlServer server = new io.lossprobe.control.ControlServer("127.0.0.1", 0,
            io.lossprobe.control.Auth.ofSecret(secret), io.lossprobe.control.ServerLimits.DEFAULTS,
            io.lossprobe.core.transport.Transports::available, new java.io.PrintWriter(log, true))) {
            Path out = dir.resolve("remote.json");
            for (int base : new int[] {44724, 44728}) {
                boolean reverse = base == 44728;
                List<String> args = new ArrayList<>(List.of("run", "--target", "127.0.0.1:" + server.port(),
                    "--secret-file", secretFile.toString(), "--transport", "udp,tcp", "--ports", "2", "--base-port",
                    Integer.toString(base), "--levels", "4k", "--duration", "500ms", "--warmup", "100ms",
                    "--drain", "300ms", "--probe", "echo:500", "--quiet", "-o", out.toString()));
                if (reverse) {
                    args.add("--reverse");
                }
                RunCommandTest.Outcome o = execute(args.toArray(String[]::new));
                assertThat(o.exit()).as(o.out() + o.err()).isZero();
                RunResult r = ResultFiles.read(out);
                TransportContractTest.assertIdentities(r);
                assertThat(r.steps()).hasSize(2);
                for (StepResult s : r.steps()) {
                    String what = (reverse ? "reverse " : "forward ") + s.transport();
                    assertThat(s.counts().lost()).as(what).isEqualTo(s.socketDrops() == null ? 0 : s.socketDrops());
                    assertThat(s.counts().corrupt() + s.counts().foreign()).as(what).isZero();
                    assertThat(s.probe().port()).as(what).isEqualTo(base + 2);
                    assertThat(s.probe().echo().identitiesHold()).as(what).isTrue();
                    assertThat(s.probe().echo().requestsSent()).as(what).isBetween(1L, 250L);
                    assertThat(s.probe().echo().repliesReceived()).as(what).isPositive();
                }
            }
            Await.until("the four sessions' ends in the server's log", 10_000,
                () -> log.toString().split(" finished", -1).length - 1 == 4, log::toString);
            assertThat(log.toString()).contains("2 ports from 44724", "1 ports from 44726", "2 ports from 44728",
                "1 ports from 44730");
        }
    }

    @Test
    void badUsageIsOneLineAndExitTwo() {
        for (List<String> extra : List.of(List.of("--probe", "ping"), List.of("--probe", "echo:0"),
            List.of("--probe", "echo", "--search", "ndr"), List.of("--probe", "echo", "--mode", "echo"),
            List.of("--probe", "echo", "--target", "127.0.0.1:9", "--bidir"))) {
            List<String> args = new ArrayList<>(List.of("run", "--ports", "1", "--base-port", "44720", "-o",
                dir.resolve("r.json").toString()));
            args.addAll(extra);
            RunCommandTest.Outcome o = execute(args.toArray(String[]::new));
            assertThat(o.exit()).as(String.join(" ", extra) + ": " + o.err()).isEqualTo(2);
            assertThat(o.err().strip().lines()).as(o.err()).hasSize(1);
            assertThat(o.err()).contains("--probe");
        }
    }
}
