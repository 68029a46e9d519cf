package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jfree.chart.LegendItemCollection;
import org.jfree.chart.plot.XYPlot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --probe echo}: the round trip a low-rate echo flow measured beside every stream step, in the HTML
 * report (chart and sentence), the summary tables, compare and the Prometheus textfile; and a run without a probe
 * shows none of it.
 */
class ProbeReportTest {
    @TempDir
    Path dir;

    private LoadedResult probed(String name) {
        return Fixtures.load(dir, name, Fixtures.withProbe(Fixtures.sample(), 0));
    }

    private LoadedResult plain(String name) {
        return Fixtures.load(dir, name, Fixtures.sample());
    }

    @Test
    void theReportDrawsTheRoundTripUnderLoadAndNamesTheProbeInASentence() {
        LoadedResult r = probed("p.json");
        String page = HtmlReport.render(List.of(r), m -> { });
        assertThat(page).contains("<h3 id=\"probe\">Round trip under load</h3>").contains("id=\"chart-probe\"")
            .contains("<p class=\"meta\" id=\"probe-sentence\">A 1k/s echo flow on port 45402 beside every step: "
                + "round trip p99 rose from 60 us at 10k to 2.1 ms at 50k on udp.</p>");
        // After the one-way delay, before the rates: the rest of the page keeps its order.
        assertThat(page.indexOf("id=\"probe\"")).isGreaterThan(page.indexOf("id=\"delay\""))
            .isLessThan(page.indexOf("id=\"rates\""));

        ChartParts.Figure f = HtmlReport.figures(List.of(r), Optional.empty()).stream()
            .filter(x -> x.kind().equals("probe-rtt")).findFirst().orElseThrow();
        assertThat(f.width()).isEqualTo(ReportCharts.WIDE);
        LegendItemCollection items = f.chart().getPlot().getLegendItems();
        List<String> legend = new ArrayList<>();
        for (int i = 0; i < items.getItemCount(); i++) {
            legend.add(items.get(i).getLabel());
        }
        assertThat(legend).containsExactly("udp p50", "udp p99");
        XYPlot plot = (XYPlot) f.chart().getPlot();
        // x: the step's offered rate; y: the probe's round trip in ms.
        assertThat(plot.getDataset(0).getXValue(1, 1)).isEqualTo(50_000.0);
        assertThat(plot.getDataset(0).getYValue(1, 1)).isEqualTo(2.1);
        assertThat(plot.getDataset(0).getYValue(0, 0)).isEqualTo(0.04);
        assertThat(plot.getDomainAxis().getLabel()).startsWith("offered rate");
    }

    @Test
    void eachTransportAndDirectionIsASeriesOfItsOwn() {
        ObjectNode root = Fixtures.withProbe(Fixtures.threeTransports(), 0);
        for (var step : root.withArray("steps")) {
            if (step.get("transport").asText().equals("tcp")) {
                ((ObjectNode) step.get("probe").get("echo").get("rtt")).put("p99Ns", 90_000);
            }
        }
        var steps = root.withArray("steps");
        ObjectNode reverse = steps.get(0).deepCopy();
        reverse.put("direction", "reverse");
        steps.add(reverse);
        LoadedResult r = Fixtures.load(dir, "three.json", root);
        ChartParts.Figure f = HtmlReport.figures(List.of(r), Optional.empty()).stream()
            .filter(x -> x.kind().equals("probe-rtt")).findFirst().orElseThrow();
        List<String> legend = new ArrayList<>();
        LegendItemCollection items = f.chart().getPlot().getLegendItems();
        for (int i = 0; i < items.getItemCount(); i++) {
            legend.add(items.get(i).getLabel());
        }
        assertThat(legend).contains("udp p99", "tcp p99", "aeron p99", "udp reverse p99");
        assertThat(HtmlReport.render(List.of(r), m -> { })).contains("round trip p99 stayed at 90 us at 10k and "
            + "50k on tcp").contains("round trip p99 was 60 us at 10k on udp reverse");
    }

    @Test
    void aProbeWithoutRepliesIsSaidWithoutAChart() {
        ObjectNode root = Fixtures.withProbe(Fixtures.sample(), 1000);
        LoadedResult r = Fixtures.load(dir, "silent.json", root);
        String page = HtmlReport.render(List.of(r), m -> { });
        assertThat(page).doesNotContain("id=\"chart-probe\"")
            .contains("A 1k/s echo flow on port 45402 beside every step: no probe request got a reply.");
        assertThat(SummaryTable.of(List.of(r)).csv().lines().toList().get(1)).endsWith(",,,1000");
    }

    @Test
    void withoutAProbeNothingChanges() {
        LoadedResult r = plain("r.json");
        String page = HtmlReport.render(List.of(r), m -> { });
        assertThat(page).doesNotContain("id=\"probe\"").doesNotContain("probe-sentence").doesNotContain("probe p99")
            .doesNotContain("--probe");
        assertThat(HtmlReport.figures(List.of(r), Optional.empty())).extracting(ChartParts.Figure::kind)
            .doesNotContain("probe-rtt");
        SummaryTable t = SummaryTable.of(List.of(r));
        assertThat(t.hasProbe()).isFalse();
        assertThat(t.csv()).doesNotContain("probe_");
        assertThat(t.markdown()).doesNotContain("probe ");
        assertThat(t.speedHtml(false)).doesNotContain("probe ");
    }

    @Test
    void theTablesGainProbeColumnsAppendedToTheCsv() {
        SummaryTable before = SummaryTable.of(List.of(plain("r.json")));
        SummaryTable t = SummaryTable.of(List.of(Fixtures.load(dir, "p.json",
            Fixtures.withProbe(Fixtures.sample(), 3))));
        List<String> csv = t.csv().lines().toList();
        // Appended: every existing column keeps its name and place.
        assertThat(csv.get(0)).isEqualTo(before.csv().lines().findFirst().orElseThrow()
            + ",probe_rtt_p50_ms,probe_rtt_p99_ms,probe_round_trip_lost");
        assertThat(csv.get(1)).endsWith(",0.040,0.060,3");
        assertThat(csv.get(2)).endsWith(",0.300,2.100,3");
        String md = t.markdown().lines().findFirst().orElseThrow();
        assertThat(md).endsWith("| probe p50 ms | probe p99 ms | probe lost |");
        // HTML: in the speed-and-cost table, after the one-way delay's clock bound; not in the delivery table.
        String speed = t.speedHtml(false);
        assertThat(speed).contains("<th>clock +- ms</th><th>probe p50 ms</th><th>probe p99 ms</th>"
            + "<th>probe lost</th><th>CPU %</th>").contains("<td class=\"n\">2.100</td>");
        assertThat(t.deliveryHtml(false)).doesNotContain("probe ");
    }

    @Test
    void aStepWithoutAProbeHasEmptyProbeCells() {
        ObjectNode root = Fixtures.withProbe(Fixtures.sample(), 0);
        ((ObjectNode) root.withArray("steps").get(0)).remove("probe");
        SummaryTable t = SummaryTable.of(List.of(Fixtures.load(dir, "half.json", root)));
        List<String> csv = t.csv().lines().toList();
        assertThat(csv.get(1)).endsWith(",,,");
        assertThat(csv.get(2)).endsWith(",0.300,2.100,0");
        String page = HtmlReport.render(List.of(Fixtures.load(dir, "half.json", root)), m -> { });
        assertThat(page).contains("A 1k/s echo flow on port 45402 beside 1 of 2 steps: round trip p99 was 2.1 ms "
            + "at 50k on udp.");
    }

    @Test
    void compareShowsTheProbeP99WhenBothRunsHaveProbes() {
        LoadedResult a = probed("a.json");
        ObjectNode bRoot = Fixtures.withProbe(Fixtures.sample(), 0);
        ((ObjectNode) bRoot.withArray("steps").get(1).get("probe").get("echo").get("rtt")).put("p99Ns", 4_200_000);
        LoadedResult b = Fixtures.load(dir, "b.json", bRoot);
        ComparisonReport c = new ComparisonReport(a, b, Comparison.Tolerance.DEFAULT);
        assertThat(c.probes()).isTrue();
        String text = c.text();
        assertThat(text).contains("probe round trip p99 in ms (run --probe), A -> B:")
            .contains("udp    50k        2.100 -> 4.200     +100.0%");
        assertThat(text.lines()).allMatch(l -> l.length() <= ComparisonReport.TEXT_WIDTH);
        assertThat(c.markdown()).contains("| probe p99 ms A | probe p99 ms B | delta % |")
            .contains("| udp | 50k | 2.100 | 4.200 | +100.0% |");
        assertThat(c.json()).contains("\"probeRttP99Ms\" : 4.2").contains("\"probeRttP99Percent\" : 100.0");
        String html = c.html();
        assertThat(html).contains("<h2 id=\"probe\">Round trip under load, A and B</h2>")
            .contains("id=\"compare-probe\"").contains("<th>probe p99 ms A</th>")
            .contains("<td class=\"n\">4.200</td>");
    }

    @Test
    void compareWithoutProbesInBothRunsShowsNone() {
        for (LoadedResult[] pair : new LoadedResult[][] {{plain("a.json"), plain("b.json")},
            {probed("pa.json"), plain("pb.json")}}) {
            ComparisonReport c = new ComparisonReport(pair[0], pair[1], Comparison.Tolerance.DEFAULT);
            assertThat(c.probes()).isFalse();
            // "lossprobe" contains "probe": look for what the probe adds.
            assertThat(c.text()).doesNotContain("probe round trip");
            assertThat(c.markdown()).doesNotContain("probe p99");
            assertThat(c.html()).doesNotContain("probe p99").doesNotContain("compare-probe");
            // JSON gives each step's own probe figures; a delta only where both steps had a probe.
            assertThat(c.json()).doesNotContain("probeRttP99Percent");
        }
    }

    @Test
    void theTextfileHasTheProbeRoundTripAsASummaryAndPassesPromtool() throws Exception {
        LoadedResult r = probed("p.json");
        Path prom = dir.resolve("probe.prom");
        PrometheusTextfile.write(prom, r, RunLabels.of(r.run()), Optional.empty());
        String text = Files.readString(prom);
        String step = "direction=\"forward\",mode=\"stream\",name=\"" + PrometheusTextfile.defaultName(r.run())
            + "\",offered_rate=\"50000\",size_bytes=\"64\",target=\"local\",transport=\"udp\"";
        assertThat(text).contains("# TYPE lossprobe_last_run_probe_round_trip_seconds summary")
            .contains("lossprobe_last_run_probe_round_trip_seconds{" + step + ",quantile=\"0.99\"} 0.0021")
            .contains("lossprobe_last_run_probe_round_trip_seconds{" + step + ",quantile=\"0.5\"} 3.0E-4")
            .contains("lossprobe_last_run_probe_round_trip_seconds_count{" + step + "} 1000")
            .contains("lossprobe_last_run_probe_lost_messages{" + step + "} 0.0")
            .doesNotContain("lossprobe_last_run_round_trip_seconds");

        Path none = dir.resolve("none.prom");
        LoadedResult p = plain("r.json");
        PrometheusTextfile.write(none, p, RunLabels.of(p.run()), Optional.empty());
        assertThat(Files.readString(none)).doesNotContain("_probe_"); // "lossprobe" contains "probe"

        assumeTrue(Files.isExecutable(PrometheusTextfileTest.PROMTOOL), "promtool not installed");
        assertThat(PrometheusTextfileTest.promtool(prom)).isEqualTo("exit 0: ");
    }
}
