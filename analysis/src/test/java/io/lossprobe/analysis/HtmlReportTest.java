package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.awt.Paint;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jfree.chart.LegendItem;
import org.jfree.chart.LegendItemCollection;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the HTML report says and in what order, and what its charts are made of (without a browser). */
class HtmlReportTest {
    @TempDir
    Path dir;

    private LoadedResult lossy(String name) {
        return Fixtures.load(dir, name, Fixtures.withStep(1, s -> Fixtures.lose(s, 600)));
    }

    @Test
    void leadsWithTheVerdictAndTheLossCurveThenTheTable() {
        String page = HtmlReport.render(List.of(lossy("r.json")), m -> { });
        int verdict = page.indexOf("id=\"verdict\"");
        int curve = page.indexOf("id=\"chart-loss\"");
        int table = page.indexOf("id=\"summary\"");
        assertThat(verdict).isPositive().isLessThan(curve);
        assertThat(curve).isLessThan(table);
        assertThat(page.substring(verdict, curve))
            .contains("udp: no loss up to 10k; loss from 50k (1.2 %): the knee is between 10k and 50k");
        // The loss curve: a tick label per level, and the values on hover.
        String svg = page.substring(curve, table);
        assertThat(svg).contains(">10k</text>", ">50k</text>")
                .contains("<title>udp 50k: loss 1.2 % (600 of 50,000 lost)");
    }

    @Test
    void everyMultiSeriesChartHasADistinctColourPerSeries() {
        LoadedResult older = Fixtures.load(dir, "older.json", olderThan(Fixtures.threeTransports(), 86_400));
        LoadedResult newer = Fixtures.load(dir, "newer.json",
            Fixtures.withIntervalsAndSearch(Fixtures.threeTransports()));
        LoadedResult echo = Fixtures.load(dir, "echo.json", Fixtures.echo());
        List<ChartParts.Figure> figures = new ArrayList<>(HtmlReport.figures(List.of(older, newer),
            Optional.of(strict())));
        figures.addAll(HtmlReport.figures(List.of(echo), Optional.empty()));
        assertThat(figures).extracting(ChartParts.Figure::kind).contains("loss-curve", "achieved", "delay-bands",
            "percentiles", "heatmap", "intervals", "trend", "rtt-bands");
        int multi = 0;
        for (ChartParts.Figure f : figures) {
            List<Paint> paints = new ArrayList<>();
            List<String> names = new ArrayList<>();
            LegendItemCollection items = f.chart().getPlot().getLegendItems();
            for (int i = 0; items != null && i < items.getItemCount(); i++) {
                LegendItem item = items.get(i);
                paints.add(item.getLinePaint() != null ? item.getLinePaint() : item.getFillPaint());
                names.add(item.getLabel());
            }
            assertThat(paints).as(f.id() + " " + names).doesNotHaveDuplicates();
            multi += paints.size() > 1 ? 1 : 0;
        }
        assertThat(multi).isGreaterThan(10);
    }

    @Test
    void countAxesNeverGoBelowZero() {
        LoadedResult r = Fixtures.load(dir, "r.json", Fixtures.withIntervalsAndSearch(Fixtures.threeTransports()));
        for (ChartParts.Figure f : HtmlReport.figures(List.of(r), Optional.empty())) {
            f.chart().createBufferedImage(f.width(), f.height()); // axes settle their ranges when drawn
            for (XYPlot p : plots(f)) {
                ValueAxis y = p.getRangeAxis();
                if (f.countAxes() || f.kind().equals("intervals") && !y.getLabel().startsWith("delay")) {
                    // At most a hair below zero (room for a line of zeros), never a tick there: the browser test
                    // reads the tick labels.
                    assertThat(y.getLowerBound()).as(f.id() + " " + y.getLabel())
                        .isGreaterThanOrEqualTo(-0.021 * Math.max(1, y.getUpperBound()));
                }
            }
        }
    }

    @Test
    void noRetransmitsAreSaidInWordsInsteadOfAFlatChart() {
        LoadedResult r = Fixtures.load(dir, "r.json", Fixtures.threeTransports());
        String page = HtmlReport.render(List.of(r), m -> { });
        assertThat(page).doesNotContain("id=\"chart-retransmits\"")
            .contains("<li>tcp: no retransmits at any level</li>")
            .contains("<li>aeron: no retransmits at any level, no NAKs</li>")
            .contains("<li>udp: does not repair (no retransmit or NAK counters)</li>");
        ObjectNode some = Fixtures.threeTransports();
        ((ObjectNode) some.withArray("steps").get(3).get("transportCounters")).put("tcp.totalRetrans", 25);
        String withRetransmits = HtmlReport.render(List.of(Fixtures.load(dir, "s.json", some)), m -> { });
        assertThat(withRetransmits).contains("id=\"chart-retransmits\"")
                .contains("tcp: 25 retransmits over all levels");
    }

    @Test
    void intervalsAndSearchesAreDrawnWhenPresentAndSkippedWhenAbsent() {
        String without = HtmlReport.render(List.of(lossy("plain.json")), m -> { });
        assertThat(without).doesNotContain("id=\"intervals").doesNotContain("NDR");
        LoadedResult with = Fixtures.load(dir, "extras.json",
            Fixtures.withIntervalsAndSearch(Fixtures.withStep(1, s -> Fixtures.lose(s, 600))));
        assertThat(with.extras().intervals()).hasSize(2);
        assertThat(with.extras().searches()).hasSize(2);
        String page = HtmlReport.render(List.of(with), m -> { });
        assertThat(page).contains("id=\"intervals-0\"")
            .contains("<li>udp NDR: 32k messages/s, between 30k and 34k, loss there 0 %, 6 trials</li>")
            .contains("<li>udp PDR (loss &lt;= 0.50 %): 41k messages/s")
            // the searches are marked on the loss curve
            .contains(">udp NDR 32k</text>");
        String intervals = page.substring(page.indexOf("id=\"intervals-0\""));
        assertThat(intervals).contains("<title>udp 50k, 0.90-1.00 s: loss 2.4 % (120 of 5,000)");
    }

    @Test
    void delayBetweenHostsShowsItsClockBound() {
        LoadedResult r = Fixtures.load(dir, "two.json", Fixtures.twoHosts("server.example", false));
        String page = HtmlReport.render(List.of(r), m -> { });
        assertThat(page).contains("between this host and <b>server.example</b> (forward)")
            .contains("(+-0.052 ms clock bound)")
            .contains("Between hosts: every value is true to +-0.052 ms "
                + "(the clock offset&apos;s bound, grey around p50)")
            .contains("Between hosts: every value is true to +-0.052 ms (the clock offset&apos;s bound)</text>");
        assertThat(SummaryTable.of(List.of(r)).csv()).contains("delay_uncertainty_ms").contains(",0.052,");
    }

    @Test
    void aFailedRunShowsItsFailureTextFirst() {
        ObjectNode failed = Fixtures.sample();
        failed.put("status", "failed").put("error", "java.io.IOException: peer closed the control connection");
        String page = HtmlReport.render(List.of(Fixtures.load(dir, "f.json", failed)), m -> { });
        assertThat(page.indexOf("id=\"failure\"")).isPositive().isLessThan(page.indexOf("id=\"verdict\""));
        assertThat(page).contains("peer closed the control connection");
    }

    @Test
    void withAPolicyTheVerdictLeadsWithTheCheckAndTheTrendComesBeforeTheNewestRun() {
        LoadedResult older = Fixtures.load(dir, "older.json", olderThan(Fixtures.sample(), 86_400));
        LoadedResult newer = lossy("newer.json");
        String page = HtmlReport.render(List.of(older, newer), Optional.of(strict()), m -> { });
        int verdict = page.indexOf("id=\"verdict\"");
        assertThat(page.indexOf("Check FAILED")).isGreaterThan(verdict).isLessThan(page.indexOf("id=\"trend\""));
        assertThat(page).contains("udp 50k maxLossPercent: 1.2000% &gt; limit 0.0000%");
        assertThat(page.indexOf("id=\"trend\"")).isLessThan(page.indexOf("id=\"chart-loss\""));
        assertThat(page).contains("1 of 2 run(s) failed the policy")
            .contains("<title>check failed, run of " + newer.startedAt());
    }

    private Policy strict() {
        try {
            return Policy.read(Files.writeString(dir.resolve("strict.json"), "{\"defaults\":{\"maxLossPercent\":0}}"));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectNode olderThan(ObjectNode root, long seconds) {
        root.put("startedAt", java.time.Instant.parse(root.get("startedAt").asText()).minusSeconds(seconds).toString());
        return root;
    }

    private static List<XYPlot> plots(ChartParts.Figure f) {
        List<XYPlot> out = new ArrayList<>();
        if (f.chart().getPlot() instanceof CombinedDomainXYPlot c) {
            for (Object p : c.getSubplots()) {
                out.add((XYPlot) p);
            }
        } else if (f.chart().getPlot() instanceof XYPlot p) {
            out.add(p);
        }
        return out;
    }
}
