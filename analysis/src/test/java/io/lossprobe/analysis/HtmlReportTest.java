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
        LoadedResult udpLost = Fixtures.load(dir, "udp-lost.json", udpLostAt50k(Fixtures.threeTransports()));
        List<ChartParts.Figure> figures = new ArrayList<>(HtmlReport.figures(List.of(older, newer),
            Optional.of(strict())));
        figures.addAll(HtmlReport.figures(List.of(echo), Optional.empty()));
        figures.addAll(HtmlReport.figures(List.of(udpLost), Optional.empty()));
        assertThat(figures).extracting(ChartParts.Figure::kind).contains("loss-curve", "delay-overview", "achieved",
            "delay-bands", "percentiles", "heatmap", "intervals", "trend", "rtt-bands");
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
    void noLossAnywhereIsSaidInWordsAndTheSpaceGoesToDelay() {
        LoadedResult r = Fixtures.load(dir, "r.json", Fixtures.threeTransports());
        String page = HtmlReport.render(List.of(r), m -> { });
        String sentence = "<p class=\"no-loss\" id=\"no-loss\">No step lost a message: udp, tcp and aeron "
            + "delivered every message they sent at 10k and 50k.</p>";
        assertThat(page).doesNotContain("id=\"chart-loss\"").doesNotContain("id=\"lossless\"").contains(sentence);
        // Where the loss curve was, right after the verdict: the sentence, then p50 and p99 of every transport.
        int verdict = page.indexOf("id=\"verdict\"");
        int no = page.indexOf(sentence);
        int delay = page.indexOf("<figure class=\"chart\" id=\"chart-delay\"");
        assertThat(verdict).isPositive().isLessThan(no);
        assertThat(no).isLessThan(delay);
        assertThat(delay).isLessThan(page.indexOf("id=\"summary\""));
        ChartParts.Figure overview = HtmlReport.figures(List.of(r), Optional.empty()).stream()
            .filter(f -> f.id().equals("chart-delay")).findFirst().orElseThrow();
        assertThat(overview.kind()).isEqualTo("delay-overview");
        assertThat(overview.width()).isEqualTo(ReportCharts.WIDE);
        List<String> legend = new ArrayList<>();
        LegendItemCollection items = overview.chart().getPlot().getLegendItems();
        for (int i = 0; i < items.getItemCount(); i++) {
            legend.add(items.get(i).getLabel());
        }
        assertThat(legend).containsExactly("udp p50", "udp p99", "tcp p50", "tcp p99", "aeron p50", "aeron p99");

        // One transport, one level; and a step that sent nothing is named (it delivered nothing either).
        ObjectNode one = Fixtures.sample();
        one.withArray("steps").remove(1);
        ObjectNode counts = (ObjectNode) one.withArray("steps").get(0).get("counts");
        counts.put("sent", 0).put("received", 0).put("behind", 10_000);
        String idle = HtmlReport.render(List.of(Fixtures.load(dir, "one.json", one)), m -> { });
        assertThat(idle).contains(">No step lost a message: udp delivered every message it sent at 10k. Nothing "
            + "was sent by udp at 10k.</p>");
    }

    @Test
    void whenSomeTransportsLostTheCurveStaysAndTheOthersAreNamedInWords() {
        String page = HtmlReport.render(List.of(Fixtures.load(dir, "r.json",
            udpLostAt50k(Fixtures.threeTransports()))), m -> { });
        assertThat(page).contains("id=\"chart-loss\"").doesNotContain("id=\"no-loss\"")
            .doesNotContain("id=\"chart-delay\"")
            .contains("<p class=\"meta\" id=\"lossless\">tcp and aeron lost no message at any level: their lines "
                + "lie at 0, where other lines can hide them.</p>")
            // and in the chart itself, for the chart seen alone
            .contains("No loss at any level: tcp, aeron.</text>");
        assertThat(page.indexOf("id=\"chart-loss\"")).isLessThan(page.indexOf("id=\"lossless\""));
        assertThat(page.indexOf("id=\"lossless\"")).isLessThan(page.indexOf("id=\"summary\""));
        // One transport that lost: no transport to name.
        assertThat(HtmlReport.render(List.of(lossy("u.json")), m -> { })).contains("id=\"chart-loss\"")
            .doesNotContain("id=\"lossless\"").doesNotContain("id=\"no-loss\"");
    }

    @Test
    void theSummaryIsTwoTablesDeliveryThenSpeedAndCost() {
        String page = HtmlReport.render(List.of(lossy("r.json")), m -> { });
        String summary = page.substring(page.indexOf("id=\"summary\""), page.indexOf("id=\"delay\""));
        int delivery = summary.indexOf("<h3 id=\"delivery\">Delivery</h3>");
        int speed = summary.indexOf("<h3 id=\"speed\">Speed and cost</h3>");
        assertThat(delivery).isPositive().isLessThan(speed);
        List<List<String>> headers = headers(summary);
        assertThat(headers).hasSize(2);
        assertThat(headers.get(0)).containsExactly("transport", "level", "offered", "sent", "behind", "refused",
            "received", "lost", "loss %", "late", "duplicates", "reordered", "k-drops", "retrans/1k", "NAKs/1k",
            "warnings", "flags");
        assertThat(headers.get(1)).containsExactly("transport", "level", "received/s", "sent/s", "mean ms", "p50 ms",
            "p99 ms", "clock +- ms", "CPU %", "host CPU %", "NIC", "NIC in Mb/s", "NIC out Mb/s", "NIC in pkt/s",
            "NIC out pkt/s", "flags");
        // A stream run has no transactions: the rate is called what it is.
        assertThat(summary).doesNotContain("TPS (replies/s)").doesNotContain("achieved TPS")
            .contains("a stream run has no transactions, so no TPS");
        // The lossy step, udp 50k: 50,000 offered and sent, 49,400 received, 600 lost.
        assertThat(summary).contains("<tr class=\"lossy\"><td>udp</td><td>50k</td><td class=\"n\">50,000</td>"
            + "<td class=\"n\">50,000</td><td class=\"n\">0</td><td class=\"n\">0</td>"
            + "<td class=\"n\">49,400</td><td class=\"n\">600</td><td class=\"n\">1.2000</td>");

        // Echo mode: TPS is the replies per second, beside the rates.
        String echo = HtmlReport.render(List.of(Fixtures.load(dir, "e.json", Fixtures.echo())), m -> { });
        String echoSummary = echo.substring(echo.indexOf("id=\"summary\""), echo.indexOf("id=\"delay\""));
        assertThat(headers(echoSummary).get(1)).startsWith("transport", "level", "received/s", "sent/s",
            "TPS (replies/s)", "mean ms");

        // Every run: the same two tables with the start of each run.
        LoadedResult older = Fixtures.load(dir, "older.json", olderThan(Fixtures.sample(), 86_400));
        String runs = HtmlReport.render(List.of(older, lossy("newer.json")), m -> { });
        String every = runs.substring(runs.indexOf("id=\"runs\""));
        assertThat(every).contains("<h3 id=\"runs-delivery\">Delivery</h3>", "<h3 id=\"runs-speed\">Speed and "
            + "cost</h3>");
        assertThat(headers(every)).hasSize(2).allSatisfy(h -> assertThat(h).startsWith("started", "transport"));
    }

    /** The header cells of each table in {@code html}, in order. */
    private static List<List<String>> headers(String html) {
        List<List<String>> out = new ArrayList<>();
        java.util.regex.Matcher head = java.util.regex.Pattern.compile("<thead><tr>(.*?)</tr></thead>").matcher(html);
        while (head.find()) {
            List<String> cells = new ArrayList<>();
            java.util.regex.Matcher th = java.util.regex.Pattern.compile("<th>(.*?)</th>").matcher(head.group(1));
            while (th.find()) {
                cells.add(th.group(1));
            }
            out.add(cells);
        }
        return out;
    }

    /** {@code root} (three transports) with udp's 50k step losing 600 messages. */
    static ObjectNode udpLostAt50k(ObjectNode root) {
        Fixtures.lose((ObjectNode) root.withArray("steps").get(1), 600);
        return root;
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
