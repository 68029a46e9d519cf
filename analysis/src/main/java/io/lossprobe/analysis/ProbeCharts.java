package io.lossprobe.analysis;

import io.lossprobe.core.result.ProbeResult;
import io.lossprobe.core.result.StepResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jfree.chart.axis.ValueAxis;

/**
 * {@code run --probe echo}: a low-rate echo flow on a port of its own beside every stream step, so each step
 * records the round trip under that step's load. Drawn as the round trip's p50 and p99 against the step's offered
 * rate, one series per transport (and direction): how queues fill as the load rises, the bufferbloat curve. See
 * docs/report.md.
 */
final class ProbeCharts {
    /** Indexes into p50, p90, p99, p99.9: the probe is drawn at p50 and p99. */
    private static final int[] P50_P99 = {0, 2};
    private final Palette palette;
    private final DelayCharts delays;

    ProbeCharts(Palette palette, DelayCharts delays) {
        this.palette = palette;
        this.delays = delays;
    }

    DelayCharts delays() {
        return delays;
    }

    /** Per series, its steps whose probe measured a round trip, lowest offered rate first. */
    static Map<String, List<StepMetrics>> measured(List<StepMetrics> steps) {
        Map<String, List<StepMetrics>> out = new LinkedHashMap<>();
        for (Map.Entry<String, List<StepMetrics>> e : ReportCharts.byTransport(steps).entrySet()) {
            List<StepMetrics> ms = e.getValue().stream().filter(m -> m.probe() && !Double.isNaN(m.probeRttMs()[0]))
                .sorted(java.util.Comparator.comparingDouble(StepMetrics::offeredRate)).toList();
            if (!ms.isEmpty()) {
                out.put(e.getKey(), ms);
            }
        }
        return out;
    }

    /**
     * The probe's round trip p50 and p99 of {@code steps} per series, named {@code prefix} and the series, in the
     * series' colours (or {@code override}, when given).
     */
    List<DelayCharts.PctSet> sets(String prefix, List<StepMetrics> steps, java.awt.Color override) {
        List<DelayCharts.PctSet> sets = new ArrayList<>();
        measured(steps).forEach((series, ms) -> sets.add(new DelayCharts.PctSet(prefix + series,
            override == null ? palette.transport(series) : override, points(ms), P50_P99, false)));
        return sets;
    }

    /** A step's probe round trip percentiles against its offered rate. */
    static List<DelayCharts.Pct> points(List<StepMetrics> steps) {
        return steps.stream().map(m -> new DelayCharts.Pct(m.offeredRate(), m.probeRttMs(), Double.NaN,
            ReportCharts.levelName(m))).toList();
    }

    /** The chart, or null when no step's probe measured a round trip. */
    ChartParts.Figure roundTripUnderLoad(String id, List<StepMetrics> steps) {
        List<DelayCharts.PctSet> sets = sets("", steps, null);
        if (sets.isEmpty()) {
            return null;
        }
        ValueAxis y = DelayCharts.delayAxis("probe round trip (ms)", DelayCharts.values(sets));
        return delays.bands(id, "probe-rtt", "Round trip under load: the probe's p50 and p99 against offered rate",
            ReportCharts.levelAxis("offered rate of the step (messages/s)", steps), y, sets, ReportCharts.WIDE,
            ReportCharts.WIDE_HEIGHT);
    }

    /**
     * The probe in one sentence: "A 1k/s echo flow on port 45402 beside every step: round trip p99 rose from 60 us
     * at 10k to 2.1 ms at 1M on udp." Null when no step had a probe.
     */
    static String sentence(List<StepResult> steps, List<StepMetrics> metrics) {
        List<ProbeResult> probes = steps.stream().map(StepResult::probe).filter(p -> p != null).toList();
        if (probes.isEmpty()) {
            return null;
        }
        Set<String> rates = new LinkedHashSet<>();
        Set<String> ports = new LinkedHashSet<>();
        for (ProbeResult p : probes) {
            rates.add(ReportCharts.RateFormat.compact(p.ratePerSecond()) + "/s");
            ports.add(Integer.toString(p.port()));
        }
        StringBuilder sb = new StringBuilder("A ").append(ReportCharts.words(List.copyOf(rates)))
            .append(' ').append(probes.get(0).mode()).append(" flow on ").append(ports.size() == 1 ? "port " : "ports ")
            .append(ReportCharts.words(List.copyOf(ports))).append(" beside ")
            .append(probes.size() == steps.size() ? "every step" : probes.size() + " of " + steps.size() + " steps");
        List<String> parts = new ArrayList<>();
        measured(metrics).forEach((series, ms) -> parts.add(curve(series, ms)));
        if (parts.isEmpty()) {
            return sb.append(": no probe request got a reply.").toString();
        }
        return sb.append(": ").append(String.join("; ", parts)).append('.').toString();
    }

    /** "round trip p99 rose from 60 us at 10k to 2.1 ms at 1M on udp" (the first and the highest rate). */
    private static String curve(String series, List<StepMetrics> ms) {
        StepMetrics lo = ms.get(0);
        StepMetrics hi = ms.get(ms.size() - 1);
        double from = lo.probeRttMs()[2];
        double to = hi.probeRttMs()[2];
        if (ms.size() == 1) {
            return "round trip p99 was " + duration(from) + " at " + lo.level() + " on " + series;
        }
        String way = to > from ? "rose from " : to < from ? "fell from " : "stayed at ";
        return "round trip p99 " + way + duration(from) + " at " + lo.level()
            + (to == from ? " and " : " to " + duration(to) + " at ") + hi.level() + " on " + series;
    }

    /** A round trip for a sentence: 60 us, 2.1 ms, 1.5 s (two significant digits). */
    static String duration(double ms) {
        if (ms < 1) {
            return ChartParts.sig2(ms * 1000) + " us";
        }
        return ms < 1000 ? ChartParts.sig2(ms) + " ms" : ChartParts.sig2(ms / 1000) + " s";
    }
}
