package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The textfile must parse with Prometheus' own parser. No Java parser of the text format is on Maven Central, so
 * this runs {@code promtool check metrics} (Debian package {@code prometheus}, installed by .ci/run), which parses
 * with Prometheus' expfmt parser and lints names (units, {@code _total} only on counters).
 */
class PrometheusTextfileTest {
    static final Path PROMTOOL = Path.of("/usr/bin/promtool");
    private static final Pattern SAMPLE = Pattern.compile("^([a-z_]+)\\{([^}]*)} (\\S+)$", Pattern.MULTILINE);

    @TempDir
    Path dir;

    @Test
    void aCheckedRunPassesPromtoolWithGaugesNamedForWhatTheyAre() throws Exception {
        assumeTrue(Files.isExecutable(PROMTOOL), "promtool not installed (apt-get install prometheus)");
        Policy policy = Policy.read(Files.writeString(dir.resolve("p.json"),
                "{\"defaults\":{\"maxLossPercent\":0.1}}"));
        LoadedResult run = Fixtures.load(dir, "r.json", Fixtures.withStep(1, s -> {
            Fixtures.lose(s, 700);
            s.with("transportCounters").put("retransmitsSent", 3).put("naksSent", 4);
        }));
        CheckReport report = new PolicyCheck(policy).check(run, Optional.empty());
        Path prom = dir.resolve("lossprobe.prom");
        PrometheusTextfile.write(prom, report);

        String text = Files.readString(prom);
        String name = "name=\"" + PrometheusTextfile.defaultName(run.run()) + "\"";
        String step = "direction=\"forward\",mode=\"stream\"," + name + ",offered_rate=\"50000\",size_bytes=\"64\","
            + "target=\"local\",transport=\"udp\"";
        assertThat(text).contains("lossprobe_last_check_passed{direction=\"forward\",mode=\"stream\"," + name
                + ",size_bytes=\"64\",target=\"local\"} 0.0")
            .contains("lossprobe_last_run_lost_messages{" + step + "} 700.0")
            .contains("# TYPE lossprobe_last_run_lost_messages gauge")
            .contains("lossprobe_last_run_loss_ratio{" + step + "} 0.014")
            .contains("lossprobe_last_run_status{direction=\"forward\",mode=\"stream\"," + name
                + ",size_bytes=\"64\",status=\"complete\",target=\"local\"} 1.0")
            .contains("lossprobe_last_run_status{direction=\"forward\",mode=\"stream\"," + name
                + ",size_bytes=\"64\",status=\"failed\",target=\"local\"} 0.0")
            .contains("lossprobe_last_run_duration_seconds{")
            .contains("lossprobe_last_run_start_timestamp_seconds{")
            // Delay distributions are summaries: quantile labels (1 is the maximum), _count and _sum.
            .contains("# TYPE lossprobe_last_run_delay_seconds summary")
            .contains("lossprobe_last_run_delay_seconds{" + step + ",quantile=\"0.99\"}")
            .contains("lossprobe_last_run_delay_seconds{" + step + ",quantile=\"1.0\"}")
            .contains("lossprobe_last_run_delay_seconds_count{" + step + "} ")
            .contains("lossprobe_last_run_delay_seconds_sum{" + step + "} ")
            .contains("lossprobe_last_check_limit_passed{direction=\"forward\",metric=\"maxLossPercent\","
                + "mode=\"stream\"," + name + ",offered_rate=\"50000\",size_bytes=\"64\",target=\"local\","
                + "transport=\"udp\"} 0.0")
            .doesNotContain("percentile=").doesNotContain("level=")
            .contains("lossprobe_last_run_retransmits{" + step + "} 3.0")
            // A cron job's file holds the last run's values: gauges only, no counters that "reset" every run.
            .doesNotContain("_total").doesNotContain("counter");
        assertThat(Files.getPosixFilePermissions(prom)).isEqualTo(PosixFilePermissions.fromString("rw-r--r--"));
        try (var files = Files.list(dir)) {
            assertThat(files.filter(f -> f.getFileName().toString().endsWith(".tmp"))).isEmpty();
        }
        assertThat(promtool(prom)).isEqualTo("exit 0: ");
        // The check is real: a broken file fails it.
        Path broken = Files.writeString(dir.resolve("broken.prom"), "lossprobe_x{level=\"a\" 1\n");
        assertThat(promtool(broken)).startsWith("exit 1");
    }

    @Test
    void anEchoRunWithoutPolicyHasRoundTripAndTransactionsAndNoCheck() throws Exception {
        LoadedResult run = Fixtures.load(dir, "echo.json", Fixtures.echo());
        Path prom = dir.resolve("echo.prom");
        PrometheusTextfile.write(prom, run, RunLabels.of(run.run()), Optional.empty());
        String text = Files.readString(prom);
        String at = "direction=\"forward\",mode=\"echo\",name=\"" + PrometheusTextfile.defaultName(run.run())
            + "\",offered_rate=\"20000\"";
        assertThat(text).contains("lossprobe_last_run_round_trip_seconds{" + at + ",size_bytes=\"64\",target=\"local\","
                + "transport=\"udp\",quantile=\"0.99\"}")
            .contains("lossprobe_last_run_transactions_per_second{" + at)
            .contains("lossprobe_last_run_echo_lost_messages{" + at.replace("mode", "leg=\"reply\",mode"))
            .contains("target=\"local\"")
            .doesNotContain("lossprobe_last_check");
        assumeTrue(Files.isExecutable(PROMTOOL), "promtool not installed (apt-get install prometheus)");
        assertThat(promtool(prom)).isEqualTo("exit 0: ");
    }

    @Test
    void valuesCarryNoFloatingPointNoise() throws Exception {
        // 5.4525951 % of sent: lost/sent as a ratio must print as 0.054525951, not 0.054525950999999996.
        LoadedResult run = Fixtures.load(dir, "r.json", Fixtures.withStep(1, s -> {
            ObjectNode c = (ObjectNode) s.get("counts");
            c.put("sent", 1_000_000_000L).put("lost", 54_525_951L).put("received", 1_000_000_000L - 54_525_951L);
            s.put("achievedSendRate", 49_999.123456789012);
        }));
        String text = PrometheusTextfile.render(run, RunLabels.of(run.run()), Optional.empty());
        assertThat(text).contains("} 0.054525951\n");
        List<String> noisy = new ArrayList<>();
        Matcher m = SAMPLE.matcher(text);
        while (m.find()) {
            BigDecimal v = new BigDecimal(m.group(3));
            if (v.stripTrailingZeros().precision() > 10) {
                noisy.add(m.group(0));
            }
        }
        assertThat(noisy).isEmpty();
    }

    @Test
    void aMaxLevelReportsWhatWasSentNotAnOfferedRate() {
        LoadedResult run = Fixtures.load(dir, "max.json", Fixtures.withStep(1, s -> {
            s.put("level", "max").put("targetRate", 0);
        }));
        String text = PrometheusTextfile.render(run, RunLabels.of(run.run()), Optional.empty());
        String at = "{direction=\"forward\",mode=\"stream\",name=\"" + PrometheusTextfile.defaultName(run.run())
            + "\",offered_rate=";
        assertThat(text).contains("lossprobe_last_run_sent_messages_per_second" + at + "\"max\"")
            .doesNotContain("lossprobe_last_run_offered_messages_per_second" + at + "\"max\"")
            .contains("lossprobe_last_run_offered_messages_per_second" + at + "\"10000\"");
    }

    @Test
    void twoJobsAgainstTwoServersWriteDifferentSeries() {
        LoadedResult a = Fixtures.load(dir, "a.json", Fixtures.twoHosts("server-a.example", false));
        LoadedResult b = Fixtures.load(dir, "b.json", Fixtures.twoHosts("192.0.2.7", false));
        LoadedResult reverse = Fixtures.load(dir, "rev.json", Fixtures.twoHosts("ignored", true));
        String ta = PrometheusTextfile.render(a, RunLabels.of(a.run()), Optional.empty());
        String tb = PrometheusTextfile.render(b, RunLabels.of(b.run()), Optional.empty());
        assertThat(ta).contains("target=\"server-a.example\"").doesNotContain("target=\"local\"")
            .contains("lossprobe_last_run_delay_uncertainty_seconds{direction=\"forward\"");
        // The same plan against another server: the same default name, told apart by the target.
        assertThat(PrometheusTextfile.defaultName(a.run())).isEqualTo(PrometheusTextfile.defaultName(b.run()));
        assertThat(PrometheusTextfile.render(a, RunLabels.of(a.run()).withTarget("server-a.example:7401"),
            Optional.empty())).contains("target=\"server-a.example:7401\"");
        assertThat(tb).contains("target=\"192.0.2.7\"");
        assertThat(series(ta)).doesNotContainAnyElementsOf(series(tb));
        // A reverse run's file does not name the server; the caller (run --target) does.
        assertThat(RunLabels.of(reverse.run())).isEqualTo(new RunLabels("remote", "reverse", "stream", 64));
        assertThat(PrometheusTextfile.render(reverse, RunLabels.of(reverse.run()).withTarget("server-a.example"),
            Optional.empty())).contains("direction=\"reverse\"").contains("target=\"server-a.example\"");
    }

    @Test
    void twoPlansAgainstOneTargetHaveTwoNamesAndAGivenNameWins() {
        ObjectNode other = Fixtures.sample();
        ((ObjectNode) other.get("plan")).put("durationNs", 2_000_000_000L);
        LoadedResult a = Fixtures.load(dir, "a.json", Fixtures.sample());
        LoadedResult again = Fixtures.load(dir, "again.json", Fixtures.sample());
        LoadedResult b = Fixtures.load(dir, "b.json", other);
        assertThat(RunLabels.of(a.run())).isEqualTo(RunLabels.of(b.run()));
        assertThat(PrometheusTextfile.defaultName(a.run())).matches("plan-[0-9a-f]{8}")
            .isEqualTo(PrometheusTextfile.defaultName(again.run()))
            .isNotEqualTo(PrometheusTextfile.defaultName(b.run()));
        String ta = PrometheusTextfile.render(a, RunLabels.of(a.run()), Optional.empty());
        // Before names, these two files in one textfile directory made node_exporter drop both.
        assertThat(series(ta)).isNotEmpty().doesNotContainAnyElementsOf(
            series(PrometheusTextfile.render(b, RunLabels.of(b.run()), Optional.empty())));
        String named = PrometheusTextfile.render(again, RunLabels.of(again.run()), "nightly-udp", Optional.empty());
        assertThat(series(named)).doesNotContainAnyElementsOf(series(ta));
        assertThat(named).contains("name=\"nightly-udp\"").doesNotContain("name=\"plan-");
    }

    @Test
    void aFailedRunSaysSoWithItsStatus() {
        ObjectNode failed = Fixtures.sample();
        failed.put("status", "failed").put("error", "java.io.IOException: peer closed the control connection");
        LoadedResult run = Fixtures.load(dir, "f.json", failed);
        assertThat(PrometheusTextfile.render(run, RunLabels.of(run.run()), Optional.empty()))
            .contains("status=\"failed\",target=\"local\"} 1.0").contains("status=\"complete\",target=\"local\"} 0.0");
    }

    private static List<String> series(String text) {
        List<String> out = new ArrayList<>();
        Matcher m = SAMPLE.matcher(text);
        while (m.find()) {
            out.add(m.group(1) + "{" + m.group(2) + "}");
        }
        return out;
    }

    static String promtool(Path file) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(PROMTOOL.toString(), "check", "metrics")
            .redirectInput(file.toFile()).redirectErrorStream(true).start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return "exit " + p.exitValue() + ": " + new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
            .trim();
    }
}
