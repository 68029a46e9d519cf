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
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A mesh's numbers for Prometheus, every series labelled with {@code source} and {@code target} (host names as in
 * the mesh's host list), for node_exporter's textfile collector. Kept apart from {@link PrometheusTextfile} (one
 * run's numbers) under its own {@code lossprobe_mesh_} prefix, so the two files can sit in one textfile directory.
 * The metrics and labels are listed in docs/mesh.md.
 */
public final class MeshPrometheus {
    private MeshPrometheus() {
    }

    /** A point: labels and value. */
    private record Point(Labels labels, double value) {
    }

    /** The text exposition (Prometheus text format 0.0.4); with a check's outcome when there is one. */
    public static String render(MeshResult mesh, Optional<MeshCheck.Outcome> check) {
        List<MetricSnapshot> metrics = new ArrayList<>();
        List<Point> up = new ArrayList<>();
        Map<String, List<Point>> perStep = new LinkedHashMap<>();
        for (String name : List.of("loss", "achieved", "sent", "lost", "p50", "p99")) {
            perStep.put(name, new ArrayList<>());
        }
        for (MeshResult.Pair p : mesh.pairs()) {
            Labels pair = Labels.of("source", p.source(), "target", p.target());
            up.add(new Point(pair, p.measured() ? 1 : 0));
            if (!p.measured()) {
                continue;
            }
            for (StepResult s : p.result().steps()) {
                StepMetrics m = StepMetrics.of(p.result(), s);
                Labels l = Labels.of("source", p.source(), "target", p.target(), "transport", m.transport(),
                    "level", m.level());
                perStep.get("loss").add(new Point(l, m.lossRatio()));
                perStep.get("achieved").add(new Point(l, m.achievedRate()));
                perStep.get("sent").add(new Point(l, m.sent()));
                perStep.get("lost").add(new Point(l, m.lost()));
                perStep.get("p50").add(new Point(l.add("percentile", "50"), m.p50DelayMs() / 1000.0));
                perStep.get("p99").add(new Point(l.add("percentile", "99"), m.p99DelayMs() / 1000.0));
            }
        }
        metrics.add(gauge("lossprobe_mesh_pair_up", "1 when the pair ran and measured, 0 when it failed, was "
            + "skipped or has no data", null, up));
        metrics.add(gauge("lossprobe_mesh_loss_ratio", "Messages lost as a fraction of sent, per pair and step",
            Unit.RATIO, perStep.get("loss")));
        metrics.add(gauge("lossprobe_mesh_achieved_messages_per_second", "Messages received per second, per pair "
            + "and step", null, perStep.get("achieved")));
        List<Point> delay = new ArrayList<>(perStep.get("p50"));
        delay.addAll(perStep.get("p99"));
        metrics.add(gauge("lossprobe_mesh_delay_seconds", "One-way delay percentiles from the intended send time, "
            + "per pair and step", Unit.SECONDS, delay));
        metrics.add(counter("lossprobe_mesh_messages_sent", "Messages sent in the step's window", perStep.get("sent")));
        metrics.add(counter("lossprobe_mesh_messages_lost", "Messages sent and never received within Tmax",
            perStep.get("lost")));
        metrics.add(gauge("lossprobe_mesh_start_timestamp_seconds", "When the mesh started, Unix time",
            Unit.SECONDS, List.of(new Point(Labels.EMPTY, epochSeconds(mesh.startedAt())))));
        check.ifPresent(c -> {
            List<Point> passed = c.pairs().stream().map(p -> new Point(Labels.of("source", p.pair().source(),
                "target", p.pair().target()), p.passed() ? 1 : 0)).toList();
            metrics.add(gauge("lossprobe_mesh_check_passed", "1 when the pair held every limit of the policy, else 0",
                null, passed));
            metrics.add(gauge("lossprobe_mesh_check_failures", "Pairs that broke a limit or did not run", null,
                List.of(new Point(Labels.EMPTY, c.failures().size()))));
        });
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.builder().setIncludeCreatedTimestamps(false).build()
                .write(bytes, new MetricSnapshots(metrics));
        } catch (IOException e) {
            throw new IllegalStateException("cannot happen writing to memory", e);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /** Writes the file atomically (the textfile collector never reads half of it). */
    public static void write(Path file, MeshResult mesh, Optional<MeshCheck.Outcome> check) throws IOException {
        io.lossprobe.core.result.ResultFiles.writeAtomically(file,
                render(mesh, check).getBytes(StandardCharsets.UTF_8));
    }

    private static double epochSeconds(String iso) {
        try {
            return Instant.parse(iso).toEpochMilli() / 1000.0;
        } catch (RuntimeException e) {
            return Double.NaN;
        }
    }

    private static GaugeSnapshot gauge(String name, String help, Unit unit, List<Point> points) {
        GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help);
        if (unit != null) {
            b.unit(unit);
        }
        points.stream().filter(p -> !Double.isNaN(p.value())).forEach(p -> b.dataPoint(
            GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(p.labels()).value(p.value()).build()));
        return b.build();
    }

    private static CounterSnapshot counter(String name, String help, List<Point> points) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help);
        points.stream().filter(p -> !Double.isNaN(p.value())).forEach(p -> b.dataPoint(
            CounterSnapshot.CounterDataPointSnapshot.builder().labels(p.labels()).value(p.value()).build()));
        return b.build();
    }
}
