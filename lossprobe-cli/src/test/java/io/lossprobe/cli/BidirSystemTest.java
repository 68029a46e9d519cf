package io.lossprobe.cli;

import static io.lossprobe.cli.RunCommandTest.execute;
import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transports;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --target --bidir} against a {@code serve} on loopback: every transport's steps in both directions,
 * each marked, forward on the plan's ports and reverse on the next ones, every identity holding and only UDP
 * losing (exactly what its sockets dropped). Ports 44680-44683.
 */
@Tag("system")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class BidirSystemTest {
    private static final String SECRET = "both ways at once, a secret of 32 bytes or more";
    private static final int PORT = 44680;

    @TempDir
    Path dir;

    @Test
    void bothDirectionsRunEveryStepAndEachIsExact() throws Exception {
        StringWriter log = new StringWriter();
        try (ControlServer server = new ControlServer("127.0.0.1", 0, Auth.ofSecret(SECRET), ServerLimits.DEFAULTS,
                Transports::available, new PrintWriter(log, true))) {
            Path secret = Files.writeString(dir.resolve("secret"), SECRET + "\n");
            Path out = dir.resolve("bidir.json");
            RunCommandTest.Outcome o = execute("run", "--target", "127.0.0.1:" + server.port(), "--secret-file",
                secret.toString(), "--bidir", "--transport", "udp,tcp,aeron", "--ports", "2", "--base-port",
                Integer.toString(PORT), "--levels", "4k,8k", "--duration", "500ms", "--warmup", "0", "--drain",
                "300ms", "-o", out.toString());
            assertThat(o.exit()).as(o.out() + o.err() + log).isZero();
            assertThat(o.out()).contains("over 2 ports from 127.0.0.1:44680 and back on the 2 from 44682",
                "udp/fwd", "udp/rev", "tcp/rev", "aeron/fwd", "verdict: udp forward: ", "verdict: aeron reverse: ");
            RunResult r = ResultFiles.read(out);
            TransportContractTest.assertIdentities(r);
            assertThat(r.status()).hasToString("complete");
            assertThat(r.steps()).extracting(StepResult::series).containsExactly("udp forward", "udp reverse",
                "udp forward", "udp reverse", "tcp forward", "tcp reverse", "tcp forward", "tcp reverse",
                "aeron forward", "aeron reverse", "aeron forward", "aeron reverse");
            for (StepResult s : r.steps()) {
                int base = s.direction().equals(StepResult.FORWARD) ? PORT : PORT + 2;
                assertThat(s.flows()).extracting(FlowResult::port).as(s.series()).containsExactly(base, base + 1);
                assertThat(s.counts().scheduled()).as(s.series()).isEqualTo(s.targetRate() / 2);
                assertThat(s.counts().received()).as(s.series()).isPositive();
                long kernel = s.socketDrops() == null ? 0 : s.socketDrops();
                assertThat(s.counts().lost()).as("%s lost", s.series())
                    .isEqualTo(s.transport().equals("udp") ? kernel : 0);
                assertThat(s.counts().corrupt() + s.counts().foreign()).as(s.series()).isZero();
            }
            // The report draws each direction as a series of its own; the check applies a transport's thresholds
            // to both of its directions (udp's 0.5 % here, not the default 0.1 %).
            Path html = dir.resolve("bidir.html");
            RunCommandTest.Outcome report = execute("report", out.toString(), "-o", html.toString());
            assertThat(report.exit()).as(report.out() + report.err()).isZero();
            assertThat(Files.readString(html)).contains("udp forward", "udp reverse", "aeron reverse");
            Path policy = Files.writeString(dir.resolve("policy.json"), "{\"defaults\": {\"maxLossPercent\": 0.1},"
                + " \"transports\": {\"udp\": {\"maxLossPercent\": 0.5}}}");
            RunCommandTest.Outcome check = execute("check", out.toString(), "--policy", policy.toString());
            assertThat(check.out() + check.err()).contains("udp reverse 4k maxLossPercent", "limit 0.5000%",
                "tcp forward 8k maxLossPercent");
        }
        assertThat(log.toString()).contains("session 1 from 127.0.0.1", "session 2 from 127.0.0.1");
    }

    @Test
    void badUsageIsOneLineAndExit2() {
        for (List<String> args : List.of(List.of("run", "--bidir"), List.of("run", "--target", "127.0.0.1",
                "--bidir", "--reverse"), List.of("run", "--target", "127.0.0.1", "--bidir", "--mode", "echo"))) {
            RunCommandTest.Outcome o = execute(args.toArray(String[]::new));
            assertThat(o.exit()).as(args.toString()).isEqualTo(2);
            assertThat(o.err().strip().lines()).as(o.err()).hasSize(1);
        }
    }
}
