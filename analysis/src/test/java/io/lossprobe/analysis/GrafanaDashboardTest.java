package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.result.ResultFiles;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/grafana/lossprobe-dashboard.json queries only metrics the textfile has: every metric name in every query
 * (panels and template variables) is one the textfile of a checked stream run or of an echo run contains, and
 * every query parses as PromQL ({@code promtool check rules} on a rule file made of them).
 */
class GrafanaDashboardTest {
    private static final Path DASHBOARD = Path.of("..", "docs", "grafana", "lossprobe-dashboard.json");
    private static final Pattern METRIC = Pattern.compile("\\blossprobe_[a-z0-9_]+");
    private static final Pattern TYPE = Pattern.compile("^# TYPE (\\S+) ", Pattern.MULTILINE);

    @TempDir
    Path dir;

    @Test
    void everyQueryNamesAMetricTheTextfileContains() throws Exception {
        List<String> queries = queries();
        assertThat(queries).hasSizeGreaterThan(10);
        Set<String> named = new TreeSet<>();
        for (String q : queries) {
            Matcher m = METRIC.matcher(q);
            boolean any = false;
            while (m.find()) {
                named.add(m.group());
                any = true;
            }
            assertThat(any).as("query names a lossprobe metric: " + q).isTrue();
        }
        Set<String> exported = exported();
        assertThat(exported).as("metrics in the textfiles").containsAll(named);
        // And the dashboard shows the headline metrics.
        assertThat(named).contains("lossprobe_last_run_loss_ratio", "lossprobe_last_run_delay_seconds",
            "lossprobe_last_run_round_trip_seconds", "lossprobe_last_run_status", "lossprobe_last_check_passed",
            "lossprobe_mesh_pair_up", "lossprobe_mesh_loss_ratio", "lossprobe_mesh_check_passed");
        // Labels the textfiles no longer have (renamed in issue 28) are in no query.
        assertThat(queries).noneMatch(q -> q.contains("percentile=") || q.contains("level"));
    }

    @Test
    void everyQueryParsesAsPromql() throws Exception {
        assumeTrue(Files.isExecutable(PrometheusTextfileTest.PROMTOOL), "promtool not installed");
        StringBuilder rules = new StringBuilder("groups:\n  - name: lossprobe-dashboard\n    rules:\n");
        int i = 0;
        for (String q : queries()) {
            // Grafana fills the variables in; any regex will do for the syntax.
            String expr = q.replaceAll("\\$\\w+", ".*");
            rules.append("      - record: lossprobe:dashboard_query_").append(i++).append("\n        expr: '")
                .append(expr.replace("'", "''")).append("'\n");
        }
        Path file = Files.writeString(dir.resolve("rules.yml"), rules);
        Process p = new ProcessBuilder(PrometheusTextfileTest.PROMTOOL.toString(), "check", "rules", file.toString())
            .redirectErrorStream(true).start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();
        // The check is real: a broken query fails it.
        Path broken = Files.writeString(dir.resolve("broken.yml"),
            "groups:\n  - name: x\n    rules:\n      - record: x:y\n        expr: 'sum(lossprobe_last_run_steps'\n");
        Process b = new ProcessBuilder(PrometheusTextfileTest.PROMTOOL.toString(), "check", "rules", broken.toString())
            .redirectErrorStream(true).start();
        assertThat(b.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(b.exitValue()).isNotZero();
    }

    /** Every query of the dashboard: panel targets' expr and template variables' query. */
    static List<String> queries() throws Exception {
        JsonNode root = ResultFiles.mapper().readTree(DASHBOARD.toFile());
        List<String> out = new ArrayList<>();
        for (JsonNode panel : root.path("panels")) {
            for (JsonNode t : panel.path("targets")) {
                out.add(t.path("expr").asText());
            }
        }
        for (JsonNode v : root.path("templating").path("list")) {
            JsonNode q = v.path("query");
            String text = q.isObject() ? q.path("query").asText() : q.asText();
            // label_values(METRIC{...}, label) is Grafana's, not PromQL: check the selector inside.
            Matcher m = Pattern.compile("^label_values\\((.*),\\s*\\w+\\)$").matcher(text);
            out.add(m.matches() ? m.group(1) : text);
        }
        return out;
    }

    /** The metric names in the textfiles of a checked stream run, of an echo run and of a checked mesh. */
    Set<String> exported() throws Exception {
        Policy policy = Policy.read(Files.writeString(dir.resolve("p.json"), "{\"defaults\":{\"maxLossPercent\":0}}"));
        LoadedResult stream = Fixtures.load(dir, "two-hosts.json", Fixtures.twoHosts("server.example", false));
        LoadedResult echo = Fixtures.load(dir, "echo.json", Fixtures.echo());
        Set<String> names = new TreeSet<>();
        String at = "2026-12-01T03:05:00Z";
        MeshResult mesh = new MeshResult(MeshResult.KIND, MeshResult.SCHEMA_VERSION, "lossprobe test", at, at, "full",
            List.of(new MeshResult.Host("a", "192.0.2.1", 7400), new MeshResult.Host("b", "192.0.2.2", 7400)),
            List.of("a"), new MeshResult.Schedule(1, 0, 0, null, List.of(new MeshResult.Planned("a", "b", 0))),
            List.of(new MeshResult.Pair("a", "b", 0, MeshResult.COMPLETE, null, at, 3000L, 0L, null, null,
                stream.run())));
        for (String text : List.of(
            PrometheusTextfile.render(new PolicyCheck(policy).check(stream, Optional.empty())),
            PrometheusTextfile.render(echo, RunLabels.of(echo.run()), Optional.empty()),
            MeshPrometheus.render(mesh, Optional.of(new MeshCheck(policy).check(mesh))))) {
            Matcher m = TYPE.matcher(text);
            while (m.find()) {
                names.add(m.group(1));
            }
        }
        return names;
    }
}
