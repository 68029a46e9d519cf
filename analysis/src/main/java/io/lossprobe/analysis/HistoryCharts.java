package io.lossprobe.analysis;

import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.result.StepResult;
import java.awt.Color;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.DateAxis;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.chart.util.ShapeUtils;

/**
 * Runs against runs: the trend over nights (loss and p99 per level, one line per transport and target, failed
 * checks marked) and the comparison of two runs (loss curves and delay bands overlaid).
 */
final class HistoryCharts {
    /** Run A of a comparison is drawn in greys, B in its transports' colours. */
    static final Color A_COLOR = new Color(0x606060);
    private final Palette palette;

    HistoryCharts(Palette palette) {
        this.palette = palette;
    }

    /** Levels over all runs, lowest rate first ({@code max} last), as typed. */
    static List<String> levels(List<LoadedResult> runs) {
        Map<String, Long> rate = new LinkedHashMap<>();
        for (LoadedResult r : runs) {
            for (StepResult s : r.run().steps()) {
                rate.putIfAbsent(s.level().toString(), s.targetRate() > 0 ? s.targetRate() : Long.MAX_VALUE);
            }
        }
        return rate.entrySet().stream().sorted(Map.Entry.comparingByValue()).map(Map.Entry::getKey).toList();
    }

    /**
     * One metric of one level over the runs' start times: a line per transport (per transport and target when
     * the runs went to several targets); a red cross on every point whose check failed a limit {@code marks}
     * accepts (by the limit's name), a red line at every run that did not complete.
     */
    ChartParts.Figure trend(String id, String title, String yLabel, String level, List<LoadedResult> runs,
                            Map<LoadedResult, CheckReport> checks, ToDoubleFunction<StepMetrics> metric,
                            boolean lossLike, java.util.function.Predicate<String> marks) {
        Set<String> targets = new LinkedHashSet<>();
        runs.forEach(r -> targets.add(RunLabels.of(r.run()).target()));
        List<String> targetList = new ArrayList<>(targets);
        boolean perTarget = targets.size() > 1;
        ChartParts.Lines lines = new ChartParts.Lines();
        Map<String, Integer> series = new LinkedHashMap<>();
        int failed = lines.series("check failed", Palette.FAIL, ChartParts.LINE, false);
        lines.shape(failed, ShapeUtils.createDiagonalCross(5f, 1.2f));
        List<ValueMarker> incomplete = new ArrayList<>();
        for (LoadedResult r : runs) {
            double t = r.startedAt().toEpochMilli();
            String target = RunLabels.of(r.run()).target();
            CheckReport check = checks.get(r);
            if (r.run().status() != RunStatus.COMPLETE) {
                ValueMarker m = new ValueMarker(t, Palette.FAIL, Palette.dash(2, 1.2f));
                m.setLabel(String.valueOf(r.run().status()));
                m.setLabelFont(ChartParts.NOTE);
                m.setLabelPaint(Palette.FAIL);
                m.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
                m.setLabelTextAnchor(TextAnchor.TOP_LEFT);
                incomplete.add(m);
            }
            for (StepResult s : r.run().steps()) {
                if (!s.level().toString().equals(level)) {
                    continue;
                }
                StepMetrics m = StepMetrics.of(r.run(), s);
                String key = m.transport() + (perTarget ? " @ " + target : "");
                int ti = targetList.indexOf(target);
                int handle = series.computeIfAbsent(key, k -> lines.series(k,
                    perTarget ? Palette.shade(palette.transport(m.transport()), ti % 4)
                        : palette.transport(m.transport()),
                    perTarget ? Palette.dash(ti % 4, 2f) : ChartParts.LINE, true));
                double v = metric.applyAsDouble(m);
                String tip = String.format(Locale.ROOT, "%s %s %s, run of %s: %s", m.transport(), level,
                    perTarget ? "to " + target : "", r.startedAt(), describe(yLabel, v));
                lines.add(handle, t, v, tip);
                if (check != null) {
                    String failures = check.failures().stream()
                        .filter(e -> e.transport().equals(m.transport()) && e.level().equals(m.level())
                            && marks.test(e.metric()))
                        .map(CheckReport.Evaluation::message).collect(Collectors.joining("\n"));
                    if (!failures.isEmpty()) {
                        lines.add(failed, t, v, "check failed, run of " + r.startedAt() + ":\n" + failures);
                    }
                }
            }
        }
        ValueAxis y = ChartParts.valueAxis(yLabel, lines.yValues(), lossLike, lossLike);
        DateAxis x = new DateAxis("run started (UTC)");
        x.setTimeZone(java.util.TimeZone.getTimeZone("UTC"));
        XYPlot plot = ChartParts.plot(x, y);
        lines.addTo(plot, 0, ChartParts.floor(y));
        incomplete.forEach(plot::addDomainMarker);
        return new ChartParts.Figure(id, "trend", ChartParts.chart(title, plot, true), ReportCharts.SMALL,
            ReportCharts.SMALL_HEIGHT, lossLike);
    }

    private static String describe(String label, double v) {
        return Double.isNaN(v) ? "no value" : ChartParts.sig2(v) + " (" + label + ")";
    }

    /** Loss against rate of both runs: A in a lighter dashed shade, B in the transport's colour. */
    ChartParts.Figure compareLoss(String id, List<StepMetrics> a, List<StepMetrics> b) {
        ChartParts.Lines lines = new ChartParts.Lines();
        Set<String> transports = new LinkedHashSet<>();
        a.forEach(m -> transports.add(m.transport()));
        b.forEach(m -> transports.add(m.transport()));
        Map<String, List<StepMetrics>> byA = ReportCharts.byTransport(a);
        Map<String, List<StepMetrics>> byB = ReportCharts.byTransport(b);
        for (String t : transports) {
            Color c = palette.transport(t);
            int sa = lines.series("A " + t, Palette.shade(c, 2), Palette.dash(1, 2f), true);
            int sb = lines.series("B " + t, c, ChartParts.LINE, true);
            for (StepMetrics m : byA.getOrDefault(t, List.of())) {
                lines.add(sa, m.offeredRate(), m.lossPercent(), "A " + ReportCharts.lossTip(m));
            }
            for (StepMetrics m : byB.getOrDefault(t, List.of())) {
                lines.add(sb, m.offeredRate(), m.lossPercent(), "B " + ReportCharts.lossTip(m));
            }
        }
        List<StepMetrics> both = new ArrayList<>(a);
        both.addAll(b);
        ValueAxis y = ChartParts.valueAxis("loss % of sent", lines.yValues(), true, true);
        XYPlot plot = ChartParts.plot(ReportCharts.levelAxis("offered rate (messages/s)", both), y);
        lines.addTo(plot, 0, ChartParts.floor(y));
        JFreeChart chart = ChartParts.chart("Loss against offered rate: A (dashed) and B", plot, true);
        if (lines.yValues().stream().allMatch(v -> v == 0)) {
            ChartParts.note(chart, "No loss at any level in either run.");
        }
        return new ChartParts.Figure(id, "compare-loss", chart, ReportCharts.WIDE, ReportCharts.WIDE_HEIGHT, true);
    }

    /**
     * Delay bands of both runs per transport (p50 to p99): A in greys, B in the transport's shades; the y axis is
     * shared by all transports.
     */
    List<ChartParts.Figure> compareDelay(String idPrefix, List<StepMetrics> a, List<StepMetrics> b,
                                         DelayCharts delays) {
        Map<String, List<StepMetrics>> byA = ReportCharts.byTransport(a);
        Map<String, List<StepMetrics>> byB = ReportCharts.byTransport(b);
        Set<String> transports = new LinkedHashSet<>(byA.keySet());
        transports.addAll(byB.keySet());
        int[] p50p99 = {0, 2};
        Map<String, List<DelayCharts.PctSet>> sets = new LinkedHashMap<>();
        List<DelayCharts.PctSet> all = new ArrayList<>();
        for (String t : transports) {
            List<DelayCharts.PctSet> s = List.of(
                new DelayCharts.PctSet("A " + t, A_COLOR, points(byA.getOrDefault(t, List.of())), p50p99, true),
                new DelayCharts.PctSet("B " + t, palette.transport(t), points(byB.getOrDefault(t, List.of())),
                    p50p99, true));
            sets.put(t, s);
            all.addAll(s);
        }
        ValueAxis y = DelayCharts.delayAxis("one-way delay (ms)", DelayCharts.values(all));
        List<StepMetrics> both = new ArrayList<>(a);
        both.addAll(b);
        List<ChartParts.Figure> out = new ArrayList<>();
        int i = 0;
        for (Map.Entry<String, List<DelayCharts.PctSet>> e : sets.entrySet()) {
            out.add(delays.bands(idPrefix + i++ + "-" + ChartSvg.Ids.safe(e.getKey()), "compare-delay",
                e.getKey() + ": delay p50 and p99, A (grey) and B",
                ReportCharts.levelAxis("offered rate (messages/s)", both), ChartParts.copy(y), e.getValue(),
                ReportCharts.SMALL, ReportCharts.SMALL_HEIGHT));
        }
        return out;
    }

    /**
     * {@code run --probe}: the probe's round trip p50 and p99 of both runs against the steps' offered rate on one
     * chart, A in grey, B in the transports' colours.
     */
    ChartParts.Figure compareProbe(String id, List<StepMetrics> a, List<StepMetrics> b, ProbeCharts probes) {
        List<DelayCharts.PctSet> sets = new ArrayList<>(probes.sets("A ", a, A_COLOR));
        sets.addAll(probes.sets("B ", b, null));
        List<StepMetrics> both = new ArrayList<>(a);
        both.addAll(b);
        ValueAxis y = DelayCharts.delayAxis("probe round trip (ms)", DelayCharts.values(sets));
        return probes.delays().bands(id, "compare-probe", "Round trip under load: probe p50 and p99, A (grey) and B",
            ReportCharts.levelAxis("offered rate of the step (messages/s)", both), y, sets, ReportCharts.WIDE,
            ReportCharts.WIDE_HEIGHT);
    }

    /** A step's delay percentiles against its offered rate. */
    static List<DelayCharts.Pct> points(List<StepMetrics> steps) {
        return steps.stream().sorted(Comparator.comparingDouble(StepMetrics::offeredRate))
            .map(m -> new DelayCharts.Pct(m.offeredRate(), m.delayMs(), m.delayUncertaintyMs(),
                ReportCharts.levelName(m))).toList();
    }
}
