package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code --dscp} on loopback, through the kernel: each flow's datagrams carry its class, as the receiving socket's
 * IP_TOS / IPV6_TCLASS control messages say (the kernel reads them from each packet's header), on both send paths,
 * IPv4 and IPv6. (Re-marking needs a path that rewrites the class: DscpLabSystemTest.)
 */
class DscpLoopbackTest {
    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
        "127.0.0.1, native, 49300",
        "127.0.0.1, netty, 49310",
        "::1, native, 49320",
        "::1, netty, 49330",
    })
    void everyDatagramArrivesInItsFlowsClass(String bind, String send, int basePort) throws Exception {
        Path out = dir.resolve("r.json");
        RunCommandTest.Outcome o = RunCommandTest.execute("run", "--bind", bind, "--transport", "udp", "--ports",
            "3", "--base-port", Integer.toString(basePort), "--levels", "3k", "--duration", "500ms", "--warmup", "0",
            "--drain", "200ms", "--dscp", "EF,af41,7", "-X", "udp.send=" + send, "--quiet", "-o", out.toString());
        assertThat(o.exit()).as(o.err()).isZero();
        RunResult r = ResultFiles.read(out);
        assumeTrue(r.environment().toString().contains("dscpChecked=1"),
            "the classes are read by lossprobe's native piece (built with gcc)");
        StepResult s = r.steps().get(0);
        long[] classes = {46, 34, 7};
        for (FlowResult f : s.flows()) {
            long dscp = classes[f.flow()];
            assertThat(f.counts().received()).isPositive();
            assertThat(f.transport()).as("flow %d", f.flow()).containsEntry("udp.dscpSent", dscp)
                .containsEntry("udp.dscpAsSent", f.counts().received()).containsEntry("udp.dscpRemarked", 0L)
                .containsEntry("udp.dscpUnread", 0L).containsEntry("udp.dscpSeen", 1L << dscp);
        }
        assertThat(s.warnings()).noneMatch(w -> w.contains("re-marked"));
        assertThat(o.out()).contains("verdict: udp: every flow arrived in the class it was sent with (7, AF41, EF)");
    }
}
