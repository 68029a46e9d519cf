package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/prometheus/lossprobe-rules.yml: valid for {@code promtool check rules}, its unit tests
 * (lossprobe-rules.test.yml) pass {@code promtool test rules}, and every metric it names is one lossprobe writes.
 */
class PrometheusRulesTest {
    static final Path DIR = Path.of("..", "deploy", "prometheus");
    static final Path RULES = DIR.resolve("lossprobe-rules.yml");
    private static final Path TESTS = DIR.resolve("lossprobe-rules.test.yml");

    @TempDir
    Path dir;

    @BeforeEach
    void promtool() {
        assumeTrue(Files.isExecutable(PrometheusTextfileTest.PROMTOOL), "promtool not installed (apt-get install "
            + "prometheus)");
    }

    @Test
    void theRulesPassPromtoolCheckRules() throws Exception {
        String out = promtool(0, "check", "rules", RULES.toString());
        assertThat(out).contains("SUCCESS: 7 rules found");
    }

    @Test
    void theRulesPassTheirUnitTests() throws Exception {
        assertThat(promtool(0, "test", "rules", TESTS.toString())).contains("SUCCESS");
        // The tests are real: the stale bound at 25 h instead of 26 h fails them.
        String rules = Files.readString(RULES);
        assertThat(rules).contains("> 26 * 3600");
        Files.writeString(dir.resolve("lossprobe-rules.yml"), rules.replace("> 26 * 3600", "> 25 * 3600"));
        Path tests = Files.copy(TESTS, dir.resolve("lossprobe-rules.test.yml"));
        assertThat(promtool(1, "test", "rules", tests.toString())).contains("FAILED", "LossprobeRunStale",
            "LossprobeMeshStale");
    }

    @Test
    void everyAlertAsksForAMetricTheTextfilesHave() throws Exception {
        Set<String> named = new TreeSet<>();
        Matcher m = Pattern.compile("expr: (.*)").matcher(Files.readString(RULES));
        List<String> exprs = new ArrayList<>();
        while (m.find()) {
            exprs.add(m.group(1));
            Matcher metric = Pattern.compile("\\blossprobe_[a-z0-9_]+").matcher(m.group(1));
            while (metric.find()) {
                named.add(metric.group());
            }
        }
        assertThat(exprs).hasSize(7);
        GrafanaDashboardTest dashboard = new GrafanaDashboardTest();
        dashboard.dir = dir;
        assertThat(dashboard.exported()).containsAll(named);
        assertThat(named).contains("lossprobe_last_check_limit_passed", "lossprobe_last_run_end_timestamp_seconds",
            "lossprobe_last_check_passed", "lossprobe_mesh_pair_up", "lossprobe_mesh_end_timestamp_seconds");
    }

    private static String promtool(int exit, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(PrometheusTextfileTest.PROMTOOL.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isEqualTo(exit);
        return out;
    }
}
