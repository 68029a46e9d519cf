package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The textfile must parse with Prometheus' own parser. No Java parser of the text format is on Maven Central, so
 * this runs {@code promtool check metrics} (Debian package {@code prometheus}, installed by .ci/run), which parses
 * with Prometheus' expfmt parser and lints names (units, {@code _total} on counters).
 */
class PrometheusTextfileTest {
    private static final Path PROMTOOL = Path.of("/usr/bin/promtool");

    @TempDir
    Path dir;

    @Test
    void passesPromtoolCheckMetrics() throws Exception {
        assumeTrue(Files.isExecutable(PROMTOOL), "promtool not installed (apt-get install prometheus)");
        Policy policy = Policy.read(Files.writeString(dir.resolve("p.json"), "{\"defaults\":{\"maxLossPercent\":0.1}}"));
        LoadedResult run = Fixtures.load(dir, "r.json", Fixtures.withStep(1, s -> {
            Fixtures.lose(s, 700);
            s.with("transportCounters").put("retransmitsSent", 3).put("naksSent", 4);
        }));
        CheckReport report = new PolicyCheck(policy).check(run, Optional.empty());
        Path prom = dir.resolve("lossprobe.prom");
        PrometheusTextfile.write(prom, report);

        String text = Files.readString(prom);
        assertThat(text).contains("lossprobe_check_passed 0.0")
            .contains("lossprobe_messages_lost_total{level=\"50k\",transport=\"udp\"} 700.0")
            .contains("# TYPE lossprobe_messages_lost_total counter")
            .contains("lossprobe_delay_seconds{level=\"50k\",percentile=\"99\",transport=\"udp\"}")
            .contains("lossprobe_check_limit_passed{level=\"50k\",metric=\"maxLossPercent\",transport=\"udp\"} 0.0")
            .contains("lossprobe_retransmits_total{level=\"50k\",transport=\"udp\"} 3.0");
        assertThat(Files.getPosixFilePermissions(prom)).isEqualTo(PosixFilePermissions.fromString("rw-r--r--"));
        try (var files = Files.list(dir)) {
            assertThat(files.filter(f -> f.getFileName().toString().endsWith(".tmp"))).isEmpty();
        }

        assertThat(promtool(prom)).isEqualTo("exit 0: ");
        // The check is real: a broken file fails it.
        Path broken = Files.writeString(dir.resolve("broken.prom"), "lossprobe_x{level=\"a\" 1\n");
        assertThat(promtool(broken)).startsWith("exit 1");
    }

    private static String promtool(Path file) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(PROMTOOL.toString(), "check", "metrics")
            .redirectInput(file.toFile()).redirectErrorStream(true).start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return "exit " + p.exitValue() + ": " + new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
            .trim();
    }
}
