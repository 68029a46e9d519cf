package io.lossprobe.analysis;

import io.lossprobe.core.result.StepResult;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * A check's outcome and the run's numbers as a Prometheus text file for node_exporter's textfile collector,
 * written with the Prometheus client library's own text format writer and put in place by a rename so the
 * collector never reads half a file. Names carry their units as suffixes; counters end in {@code _total}.
 * See docs/check.md for the list.
 */
public final class PrometheusTextfile {
    private PrometheusTextfile() {
    }

    /** The text exposition (Prometheus text format 0.0.4). */
    public static String render(CheckReport report) {
        List<MetricSnapshot> metrics = new ArrayList<>();
        metrics.add(gauge("lossprobe_check_passed", "1 when the last check passed every limit, else 0", null,
            Map.of(Labels.EMPTY, report.passed() ? 1.0 : 0.0)));
        metrics.add(gauge("lossprobe_check_failures", "Limits the last check found broken", null,
            Map.of(Labels.EMPTY, (double) report.failures().size())));
        metrics.add(gauge("lossprobe_run_start_timestamp_seconds", "When the checked run started, Unix time",
            Unit.SECONDS, Map.of(Labels.EMPTY, report.run().startedAt().toEpochMilli() / 1000.0)));

        Map<Labels, Double> limits = new LinkedHashMap<>();
        for (CheckReport.Evaluation e : report.evaluations()) {
            limits.put(Labels.of("transport", e.transport(), "level", e.level(), "metric", e.metric()),
                e.passed() ? 1.0 : 0.0);
        }
        metrics.add(gauge("lossprobe_check_limit_passed", "1 when this limit held in the last check, else 0", null,
            limits));

        List<StepMetrics> steps = new ArrayList<>();
        for (StepResult s : report.run().run().steps()) {
            steps.add(StepMetrics.of(s));
        }
        metrics.add(perStep("lossprobe_loss_ratio", "Messages lost as a fraction of sent", Unit.RATIO, steps,
            StepMetrics::lossRatio));
        metrics.add(perStep("lossprobe_offered_messages_per_second", "Target rate of the step", null, steps,
            StepMetrics::offeredRate));
        metrics.add(perStep("lossprobe_achieved_messages_per_second", "Messages received per second", null, steps,
            StepMetrics::achievedRate));
        metrics.add(perStep("lossprobe_saturated", "1 when the sender fell more than 1% short of the target", null,
            steps, m -> m.saturated() ? 1 : 0));
        metrics.add(perStep("lossprobe_process_cpu_ratio", "Process CPU over the window, 1 = one core busy",
            Unit.RATIO, steps, m -> m.processCpuPercent() / 100.0));

        Map<Labels, Double> delay = new LinkedHashMap<>();
        for (StepMetrics m : steps) {
            putIfSet(delay, labels(m).add("percentile", "50"), m.p50DelayMs() / 1000.0);
            putIfSet(delay, labels(m).add("percentile", "90"), m.p90DelayMs() / 1000.0);
            putIfSet(delay, labels(m).add("percentile", "99"), m.p99DelayMs() / 1000.0);
            putIfSet(delay, labels(m).add("percentile", "99.9"), m.p999DelayMs() / 1000.0);
        }
        // A "percentile" label, not "quantile": Prometheus keeps "quantile" for summaries (promtool lints it).
        metrics.add(gauge("lossprobe_delay_seconds", "One-way delay percentiles from the intended send time",
            Unit.SECONDS, delay));

        metrics.add(counter("lossprobe_messages_sent", "Messages sent in the step's window", steps, m -> m.sent()));
        metrics.add(counter("lossprobe_messages_lost", "Messages sent and never received within Tmax", steps,
            m -> m.lost()));
        metrics.add(counter("lossprobe_messages_duplicated", "Duplicate arrivals", steps, m -> m.duplicates()));
        metrics.add(counter("lossprobe_messages_reordered", "Arrivals below the highest sequence seen", steps,
            m -> m.reordered()));
        metrics.add(counter("lossprobe_retransmits", "Retransmissions (TCP, Aeron) in the step", steps,
            StepMetrics::retransmits));
        metrics.add(counter("lossprobe_naks", "NAKs (Aeron) in the step", steps, StepMetrics::naks));

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.builder().setIncludeCreatedTimestamps(false).build()
                .write(bytes, new MetricSnapshots(metrics));
        } catch (IOException e) {
            throw new IllegalStateException("cannot happen writing to memory", e);
        }
        return bytes.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** Writes the file atomically (temporary file in the same directory, then rename). */
    public static void write(Path file, CheckReport report) throws IOException {
        io.lossprobe.core.result.ResultFiles.writeAtomically(file, render(report).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static Labels labels(StepMetrics m) {
        return Labels.of("transport", m.transport(), "level", m.level());
    }

    private static void putIfSet(Map<Labels, Double> map, Labels labels, double v) {
        if (!Double.isNaN(v)) {
            map.put(labels, v);
        }
    }

    private static GaugeSnapshot perStep(String name, String help, Unit unit, List<StepMetrics> steps,
                                         ToDoubleFunction<StepMetrics> value) {
        Map<Labels, Double> points = new LinkedHashMap<>();
        for (StepMetrics m : steps) {
            putIfSet(points, labels(m), value.applyAsDouble(m));
        }
        return gauge(name, help, unit, points);
    }

    private static GaugeSnapshot gauge(String name, String help, Unit unit, Map<Labels, Double> points) {
        GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help);
        if (unit != null) {
            b.unit(unit);
        }
        points.forEach((labels, v) -> b.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
            .labels(labels).value(v).build()));
        return b.build();
    }

    private static CounterSnapshot counter(String name, String help, List<StepMetrics> steps,
                                           ToDoubleFunction<StepMetrics> value) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help);
        for (StepMetrics m : steps) {
            double v = value.applyAsDouble(m);
            if (!Double.isNaN(v)) {
                b.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels(m)).value(v).build());
            }
        }
        return b.build();
    }
}
