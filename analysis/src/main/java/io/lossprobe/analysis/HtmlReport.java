package io.lossprobe.analysis;

import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.result.StepResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.ValueAxis;

/**
 * One self-contained HTML page over one or more result files, answer first: the verdict (check results when a
 * policy is given, else each transport's knee and any rate search), the loss curve (or, when no step lost a
 * message, that in words and a wide delay chart), then the two summary tables; delay as small multiples (with the
 * round trip under load when a {@code --probe} flow ran beside the steps); per-interval series when recorded; the
 * per-port heatmaps; attribution and warnings; the plan and the options in effect. With several runs the trend
 * comes right after the verdict. Charts are inline SVG with hover titles, no scripts, no network. Every string
 * from a result file is escaped. See docs/report.md.
 */
public final class HtmlReport {
    static final String STYLE = """
        body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}
        h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}h3{font-size:15px}
        table.summary{border-collapse:collapse;font-size:13px;margin:8px 0}
        table.summary th,table.summary td{border:1px solid #ccc;padding:3px 6px}
        table.summary th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}
        tr.lossy td{background:#fde0dd}
        figure.chart{margin:12px 0}figure.chart svg{max-width:100%;height:auto}
        .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:8px 16px}
        .grid figure.chart{margin:0}
        .meta{font-size:13px;color:#555}.warn{color:#a50f15}
        .verdict{font-size:15px;line-height:1.5}.verdict li{margin:2px 0}
        .pass{color:#1a7f37;font-weight:bold}.failed{color:#c00;font-weight:bold}
        .no-loss{font-size:15px;border-left:4px solid #1a7f37;background:#f0f9f2;padding:6px 12px;margin:12px 0}
        .banner{border:2px solid #c00;background:#fff0f0;padding:8px 12px;margin:12px 0;font-size:15px}
        dl.plan{display:grid;grid-template-columns:max-content auto;gap:2px 16px;font-size:13px}
        dl.plan dt{font-weight:bold}dl.plan dd{margin:0}
        """;

    private HtmlReport() {
    }

    /** Renders the page; {@code progress} hears what is being drawn (for long reports). */
    public static String render(List<LoadedResult> results, Consumer<String> progress) {
        return render(results, Optional.empty(), progress);
    }

    /**
     * Renders the page, checking every run against {@code policy} when given (thresholds and status; the verdict
     * then leads with the newest run's check, and the trend marks failed checks).
     */
    public static String render(List<LoadedResult> results, Optional<Policy> policy, Consumer<String> progress) {
        return page(results, policy, progress).render();
    }

    /** The charts of the page {@link #render} draws, in page order (for tests of what they show). */
    static List<ChartParts.Figure> figures(List<LoadedResult> results, Optional<Policy> policy) {
        Page page = page(results, policy, m -> { });
        page.render();
        return page.drawn;
    }

    private static Page page(List<LoadedResult> results, Optional<Policy> policy, Consumer<String> progress) {
        if (results.isEmpty()) {
            throw new IllegalArgumentException("no result files");
        }
        Map<LoadedResult, CheckReport> checks = new LinkedHashMap<>();
        policy.ifPresent(p -> results.forEach(r -> checks.put(r, new PolicyCheck(p).check(r, Optional.empty()))));
        return new Page(results, checks, progress);
    }

    /** One page being written. */
    private static final class Page {
        private final List<LoadedResult> results;
        private final Map<LoadedResult, CheckReport> checks;
        private final Consumer<String> progress;
        private final LoadedResult latest;
        private final RunResult run;
        private final List<StepMetrics> metrics = new ArrayList<>();
        private final Map<String, List<StepResult>> byTransport = new LinkedHashMap<>();
        private final Palette palette = new Palette();
        private final ReportCharts charts = new ReportCharts(palette);
        private final DelayCharts delays = new DelayCharts(palette);
        private final HistoryCharts history = new HistoryCharts(palette);
        private final ProbeCharts probes = new ProbeCharts(palette, delays);
        private final Set<String> ids = new LinkedHashSet<>();
        private final List<ChartParts.Figure> drawn = new ArrayList<>();
        private final StringBuilder sb = new StringBuilder(256 * 1024);

        Page(List<LoadedResult> results, Map<LoadedResult, CheckReport> checks, Consumer<String> progress) {
            this.results = results;
            this.checks = checks;
            this.progress = progress;
            this.latest = results.get(results.size() - 1);
            this.run = latest.run();
            Map<String, Set<Integer>> sizes = new LinkedHashMap<>();
            for (StepResult s : run.steps()) {
                sizes.computeIfAbsent(s.series(), k -> new java.util.HashSet<>())
                    .add(s.messageSize() == null ? 0 : s.messageSize());
            }
            for (StepResult s : run.steps()) {
                metrics.add(StepMetrics.of(run, s));
                // A transport run at several message sizes is a series per size, as ReportCharts.byTransport does;
                // each direction of a --bidir run is a series of its own.
                String key = sizes.get(s.series()).size() > 1 ? s.series() + " " + s.messageSize() + "B"
                    : s.series();
                byTransport.computeIfAbsent(key, k -> new ArrayList<>()).add(s);
            }
        }

        String render() {
            sb.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
                .append("<title>lossprobe report").append(multicastTitle()).append("</title>\n<style>").append(STYLE)
                .append("</style></head><body>\n")
                .append("<h1>lossprobe report").append(multicastTitle()).append("</h1>\n");
            meta();
            verdict();
            if (results.size() > 1) {
                progress.accept("drawing trends over " + results.size() + " runs");
                trend();
            }
            progress.accept("drawing charts of the newest run");
            if (!metrics.isEmpty()) {
                lossOrDelay();
            }
            sb.append("<h2 id=\"summary\">Summary").append(results.size() > 1 ? " (newest run)" : "")
                .append("</h2>\n");
            SummaryTable summary = SummaryTable.of(List.of(latest));
            sb.append("<h3 id=\"delivery\">Delivery</h3>\n").append(summary.deliveryHtml(false));
            sb.append("<p class=\"meta\">Counts over the measured window. offered = sent + behind + refused: "
                + "behind, messages the sender was too late to send (flag saturated: more than 1 % short); refused, "
                + "sends the transport refused. sent = received + lost; late arrivals (after the step closed) are "
                + "part of lost. k-drops: datagrams the kernel dropped at the receiving sockets. retrans/1k, "
                + "NAKs/1k: the transport's repairs per 1,000 messages sent.</p>\n");
            sb.append("<h3 id=\"speed\">Speed and cost</h3>\n").append(summary.speedHtml(false));
            sb.append("<p class=\"meta\">received/s, sent/s = messages per second over the measured window (the "
                + "achieved rates; a stream run has no transactions, so no TPS"
                + (metrics.stream().anyMatch(StepMetrics::echo) ? "; in echo mode TPS = replies per second" : "")
                + "). Delay: one-way, from the intended send time. clock +- ms: between hosts, the bound every "
                + "delay is true to. CPU % = this process, in % of one core; host CPU % = the whole host, in % of "
                + "all its cores (flag host-cpu: " + ChartParts.plain(StepMetrics.SATURATED_HOST_CPU_PERCENT)
                + " % or more, where the instrument's own figures bend). NIC columns: the busiest interface in the "
                + "step (most bytes), counters over window and drain divided by the window."
                + (summary.hasProbe() ? " probe p50 ms, probe p99 ms: the round trip of the --probe echo flow "
                + "beside the step, from each request's intended send time; probe lost: its requests without a "
                + "reply." : "") + "</p>\n");
            ReceiverMatrix.html(sb, latest);
            if (!metrics.isEmpty()) {
                delaySection();
                rateSection();
                intervalSection();
                heatmapSection();
            }
            ReportTables.attribution(sb, run, latest.sized());
            ReportTables.plan(sb, run);
            if (results.size() > 1) {
                SummaryTable every = SummaryTable.of(results);
                sb.append("<h2 id=\"runs\">Every run</h2>\n<p class=\"meta\">The columns of the summary above, "
                    + "for every step of every run.</p>\n<h3 id=\"runs-delivery\">Delivery</h3>\n")
                    .append(every.deliveryHtml(true)).append("<h3 id=\"runs-speed\">Speed and cost</h3>\n")
                    .append(every.speedHtml(true));
            }
            sb.append("</body></html>\n");
            return sb.toString();
        }

        /** A multicast run's group and receivers, for the title: {@code : multicast 239.255.0.1->A,B}; else "". */
        private String multicastTitle() {
            String target = RunLabels.multicastTarget(run);
            return target == null ? "" : ": " + RunLabels.multicastKind(run) + " "
                + Fmt.html(target.replace(",", ", "));
        }

        private void meta() {
            RunLabels labels = RunLabels.of(run);
            sb.append("<p class=\"meta\">").append(results.size()).append(results.size() == 1 ? " run" : " runs")
                .append(". ").append(results.size() == 1 ? "File" : "Newest").append(": <code>")
                .append(Fmt.html(latest.file().toString())).append("</code>, started ")
                .append(Fmt.html(String.valueOf(run.startedAt()))).append(", status <b>")
                .append(Fmt.html(String.valueOf(run.status()))).append("</b>, ")
                .append(RunLabels.multicastTarget(run) != null ? RunLabels.multicastKind(run) + " from this host to <b>"
                    + Fmt.html(labels.target()) + "</b>"
                    : RunLabels.LOCAL.equals(labels.target()) ? "on one host"
                    : "between this host and <b>" + Fmt.html(labels.target()) + "</b> (" + labels.direction() + ")")
                .append(", ").append(Fmt.html(labels.mode())).append(" mode.</p>\n");
            if (run.status() != RunStatus.COMPLETE) {
                sb.append("<div class=\"banner\" id=\"failure\"><b>The run did not complete: status ")
                    .append(Fmt.html(String.valueOf(run.status()))).append(".</b>");
                if (run.error() != null) {
                    sb.append(" <pre>").append(Fmt.html(run.error())).append("</pre>");
                }
                sb.append(" The steps below are those that finished.</div>\n");
            }
        }

        private void verdict() {
            sb.append("<h2 id=\"verdict\">Verdict</h2>\n<div class=\"verdict\">\n");
            CheckReport check = checks.get(latest);
            if (check != null) {
                if (check.passed()) {
                    sb.append("<p><span class=\"pass\">Check passed</span>: ").append(check.evaluations().size())
                        .append(" limit(s) held.</p>\n");
                } else {
                    sb.append("<p><span class=\"failed\">Check FAILED</span>: ").append(check.failures().size())
                        .append(" of ").append(check.evaluations().size()).append(" limit(s) broken.</p>\n<ul>");
                    check.failures().forEach(f -> sb.append("<li class=\"warn\">").append(Fmt.html(f.message()))
                        .append("</li>"));
                    sb.append("</ul>\n");
                }
            }
            if (metrics.isEmpty()) {
                sb.append("<p>The run has no steps.</p>\n");
            } else {
                sb.append("<ul>");
                List<String> verdict = new ArrayList<>(Verdict.lines(metrics, latest.extras().searches()));
                verdict.addAll(Verdict.trafficClasses(run.steps()));
                verdict.forEach(l -> sb.append("<li>").append(Fmt.html(l)).append("</li>"));
                sb.append("</ul>\n");
            }
            long warnings = run.steps().stream().mapToLong(s -> s.warnings().size()).sum();
            if (warnings > 0) {
                sb.append("<p class=\"warn\">").append(warnings).append(" warning(s): see <a href=\"#attribution\">"
                    + "where the loss happened and warnings</a>.</p>\n");
            }
            sb.append("</div>\n");
        }

        private void trend() {
            sb.append("<h2 id=\"trend\">Trend over ").append(results.size()).append(" runs</h2>\n");
            if (!checks.isEmpty()) {
                long failed = checks.values().stream().filter(c -> !c.passed()).count();
                sb.append("<p class=\"meta\">").append(failed).append(" of ").append(checks.size())
                    .append(" run(s) failed the policy; their points carry a red cross (hover for the limits).</p>\n");
            }
            sb.append("<div class=\"grid\">\n");
            int i = 0;
            for (String level : HistoryCharts.levels(results)) {
                // Delay limits are marked on the p99 chart, every other limit (loss, rate, repairs) on the loss chart.
                figure(history.trend("trend-loss-" + i, "Loss at " + level + " over time", "loss % of sent", level,
                    results, checks, StepMetrics::lossPercent, true, metric -> !isDelayLimit(metric)));
                figure(history.trend("trend-p99-" + i, "p99 delay at " + level + " over time",
                    "p99 one-way delay (ms)", level, results, checks, StepMetrics::p99DelayMs, false,
                    Page::isDelayLimit));
                i++;
            }
            sb.append("</div>\n");
        }

        private static boolean isDelayLimit(String metric) {
            return metric.toLowerCase(java.util.Locale.ROOT).contains("p99");
        }

        /**
         * The loss curve, with the transports that lost nothing named under it; or, when no step lost a message,
         * that in one sentence (the curve would be a flat line at 0, each transport hidden under the next) and the
         * space spent on delay: p50 and p99 of every transport on one wide chart.
         */
        private void lossOrDelay() {
            List<String> lossless = ReportCharts.lossless(metrics);
            if (lossless.size() < ReportCharts.byTransport(metrics).size()) {
                figure(charts.lossCurve("chart-loss", metrics, latest.extras().searches()));
                if (!lossless.isEmpty()) {
                    sb.append("<p class=\"meta\" id=\"lossless\">")
                        .append(Fmt.html(ReportCharts.losslessSentence(lossless))).append("</p>\n");
                }
                return;
            }
            sb.append("<p class=\"no-loss\" id=\"no-loss\">").append(Fmt.html(ReportCharts.noLossSentence(metrics)))
                .append("</p>\n");
            List<DelayCharts.PctSet> sets = new ArrayList<>(delaySets(new int[] {0, 2}, false).values());
            List<Double> values = DelayCharts.values(sets);
            if (values.stream().allMatch(v -> Double.isNaN(v))) {
                return; // no step recorded a delay (echo steps may not): nothing to draw
            }
            figure(delays.bands("chart-delay", "delay-overview", "One-way delay against offered rate: p50 and p99",
                ReportCharts.levelAxis("offered rate (messages/s)", metrics),
                DelayCharts.delayAxis("one-way delay (ms)", values), sets, ReportCharts.WIDE,
                ReportCharts.WIDE_HEIGHT));
        }

        /** Per transport, its steps' delay percentiles (indexes into p50, p90, p99, p99.9) in its colour. */
        private Map<String, DelayCharts.PctSet> delaySets(int[] percentiles, boolean bands) {
            Map<String, DelayCharts.PctSet> sets = new LinkedHashMap<>();
            for (Map.Entry<String, List<StepMetrics>> e : ReportCharts.byTransport(metrics).entrySet()) {
                sets.put(e.getKey(), new DelayCharts.PctSet(e.getKey(), palette.transport(e.getKey()),
                    HistoryCharts.points(e.getValue()), percentiles, bands));
            }
            return sets;
        }

        private void delaySection() {
            sb.append("<h2 id=\"delay\">Delay</h2>\n");
            sb.append("<p class=\"meta\">One-way delay from the intended send time (a sender falling behind shows). "
                + "Lines p50 (dark, solid) to p99.9 (light, dotted), bands between them; all transports share the "
                + "delay axis.</p>\n<div class=\"grid\">\n");
            Map<String, DelayCharts.PctSet> sets = delaySets(new int[] {0, 1, 2, 3}, true);
            ValueAxis y = DelayCharts.delayAxis("one-way delay (ms)", DelayCharts.values(List.copyOf(sets.values())));
            int i = 0;
            for (Map.Entry<String, DelayCharts.PctSet> e : sets.entrySet()) {
                figure(delays.bands("delay-" + i++, "delay-bands", e.getKey() + ": delay percentiles against rate",
                    ReportCharts.levelAxis("offered rate (messages/s)", metrics), ChartParts.copy(y),
                    List.of(e.getValue()), ReportCharts.SMALL, ReportCharts.SMALL_HEIGHT));
            }
            sb.append("</div>\n<h3>Percentile distribution per step</h3>\n<div class=\"grid\">\n");
            distributions("delay", "one-way delay");
            sb.append("</div>\n");
            if (run.steps().stream().anyMatch(s -> s.echo() != null)) {
                sb.append("<h3>Round trip (echo mode)</h3>\n<div class=\"grid\">\n");
                rttBands();
                distributions("rtt", "round trip");
                sb.append("</div>\n");
            }
            if (metrics.stream().anyMatch(StepMetrics::probe)) {
                probeSection();
            }
        }

        /**
         * {@code run --probe}: the probe flow's round trip p50 and p99 against the step's offered rate, one series
         * per transport, and the probe in one sentence.
         */
        private void probeSection() {
            sb.append("<h3 id=\"probe\">Round trip under load</h3>\n");
            ChartParts.Figure f = probes.roundTripUnderLoad("chart-probe", metrics);
            if (f != null) {
                figure(f);
            }
            sb.append("<p class=\"meta\" id=\"probe-sentence\">")
                .append(Fmt.html(ProbeCharts.sentence(run.steps(), metrics))).append("</p>\n");
        }

        private void distributions(String kind, String what) {
            int i = 0;
            for (Map.Entry<String, List<StepResult>> e : byTransport.entrySet()) {
                List<DelayCharts.Distribution> ds = new ArrayList<>();
                for (StepResult s : e.getValue()) {
                    DelayCharts.Distribution d = StepDistributions.of(latest.file(), s, kind);
                    if (d != null) {
                        ds.add(d);
                    }
                }
                if (!ds.isEmpty()) {
                    ChartParts.Figure f = delays.percentiles("percentiles-" + kind + "-" + i, e.getKey(), what, ds,
                        ReportCharts.SMALL, ReportCharts.SMALL_HEIGHT);
                    double bound = kind.equals("delay") ? e.getValue().stream().map(s -> StepMetrics.of(run, s))
                        .mapToDouble(StepMetrics::delayUncertaintyMs).filter(v -> !Double.isNaN(v)).max()
                        .orElse(Double.NaN) : Double.NaN;
                    if (!Double.isNaN(bound)) {
                        ChartParts.note(f.chart(), "Between hosts: every value is true to +-" + ChartParts.ms(bound)
                            + " (the clock offset's bound)");
                    }
                    figure(f);
                }
                i++;
            }
        }

        /** Round trip against TPS: one point per echo step of every run given (runs at several concurrencies). */
        private void rttBands() {
            Map<String, List<DelayCharts.Pct>> byT = new LinkedHashMap<>();
            double maxTps = 0;
            for (LoadedResult r : results) {
                for (StepResult s : r.run().steps()) {
                    StepMetrics m = StepMetrics.of(r.run(), s);
                    if (m.echo() && m.tps() > 0 && !Double.isNaN(m.rttMs()[0])) {
                        byT.computeIfAbsent(m.transport(), k -> new ArrayList<>()).add(new DelayCharts.Pct(m.tps(),
                            m.rttMs(), Double.NaN, ReportCharts.levelName(m)));
                        maxTps = Math.max(maxTps, m.tps());
                    }
                }
            }
            List<DelayCharts.PctSet> all = new ArrayList<>();
            byT.forEach((t, ps) -> all.add(new DelayCharts.PctSet(t, palette.transport(t), ps, new int[] {0, 1, 2, 3},
                true)));
            ValueAxis y = DelayCharts.delayAxis("round trip (ms)", DelayCharts.values(all));
            int i = 0;
            for (DelayCharts.PctSet set : all) {
                NumberAxis x = new NumberAxis("transactions per second (replies/s)");
                x.setNumberFormatOverride(new ReportCharts.RateFormat());
                x.setRange(0, Math.max(1, maxTps * 1.08));
                figure(delays.bands("rtt-" + i++, "rtt-bands", set.name() + ": round trip against TPS", x,
                    ChartParts.copy(y), List.of(set), ReportCharts.SMALL, ReportCharts.SMALL_HEIGHT));
            }
        }

        private void rateSection() {
            sb.append("<h2 id=\"rates\">Rates and repair</h2>\n");
            figure(charts.achievedVsRate("chart-achieved", metrics));
            Optional<ChartParts.Figure> repairs = charts.retransmitsVsRate("chart-retransmits", metrics);
            repairs.ifPresent(this::figure);
            sb.append("<ul class=\"meta\" id=\"repairs\">");
            ReportCharts.repairsInWords(metrics).forEach(l -> sb.append("<li>").append(Fmt.html(l)).append("</li>"));
            sb.append("</ul>\n");
        }

        private void intervalSection() {
            List<ChartParts.Figure> figs = new ArrayList<>();
            int i = 0;
            for (Map.Entry<String, List<StepResult>> e : byTransport.entrySet()) {
                List<DelayCharts.StepIntervals> steps = new ArrayList<>();
                for (StepResult s : e.getValue()) {
                    List<RunExtras.Interval> iv = latest.intervals(s);
                    if (!iv.isEmpty()) {
                        steps.add(new DelayCharts.StepIntervals(StepMetrics.of(run, s), iv));
                    }
                }
                if (!steps.isEmpty()) {
                    figs.add(delays.intervals("intervals-" + i, e.getKey(), steps, ReportCharts.WIDE, 560));
                }
                i++;
            }
            if (!figs.isEmpty()) {
                sb.append("<h2 id=\"intervals\">Per interval</h2>\n");
                figs.forEach(this::figure);
            }
        }

        private void heatmapSection() {
            sb.append("<h2 id=\"heatmaps\">Loss by port and level</h2>\n<p class=\"meta\">Each decade of loss has "
                + "its own colour; cells with loss show it in %, every cell on hover. A red row is one port's "
                + "problem, a red column the rate's.</p>\n<div class=\"grid\">\n");
            int i = 0;
            for (Map.Entry<String, List<StepResult>> e : byTransport.entrySet()) {
                figure(charts.heatmap("heatmap-" + ChartSvg.Ids.safe(e.getKey()) + (i == 0 ? "" : "-" + i),
                    e.getKey(), e.getValue()));
                i++;
            }
            sb.append("</div>\n");
        }

        private void figure(ChartParts.Figure f) {
            String id = ChartSvg.Ids.safe(f.id());
            while (!ids.add(id)) {
                id = id + "_";
            }
            sb.append(ChartSvg.figure(f, id));
            drawn.add(f);
        }
    }
}
