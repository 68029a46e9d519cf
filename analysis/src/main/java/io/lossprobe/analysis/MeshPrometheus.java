package io.lossprobe.analysis;

import io.lossprobe.core.result.StepResult;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import io.prometheus.metrics.model.snapshots.Unit;
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
 * A mesh's numbers for Prometheus, every series labelled with {@code name} (the mesh's, {@code --name}) and the pair
 * ones with {@code source} and {@code target} (host names as in the mesh's host list), for node_exporter's textfile
 * collector. Kept apart from {@link PrometheusTextfile} (one run's numbers) under its own {@code lossprobe_mesh_}
 * prefix, so the two files can sit in one textfile directory. The counts are gauges: the file holds the last mesh's
 * counts, which a counter (reset every night) would misrepresent. The metrics and labels are listed in docs/mesh.md.
 */
public final class MeshPrometheus {
    private MeshPrometheus() {
    }

    /** A point: labels and value. */
    private record Point(Labels labels, double value) {
    }

    /** The text exposition under the mesh's default name; with a check's outcome when there is one. */
    public static String render(MeshResult mesh, Optional<MeshCheck.Outcome> check) {
        return render(mesh, null, check);
    }

    /**
     * The {@code name} label of a mesh when {@code --name} is not given: {@code mesh-} and the first 8 hex digits of
     * the SHA-256 of its host list and selection.
     */
    public static String defaultName(MeshResult mesh) {
        return Exposition.defaultName("mesh-", List.of(mesh.hosts(), String.valueOf(mesh.selection())));
    }

    /**
     * The text exposition (Prometheus text format 0.0.4); with a check's outcome when there is one; every series
     * labelled {@code name} (null or blank: {@link #defaultName}).
     */
    public static String render(MeshResult mesh, String name, Optional<MeshCheck.Outcome> check) {
        Labels named = Labels.of("name", Exposition.name(name, defaultName(mesh)));
        List<MetricSnapshot> metrics = new ArrayList<>();
        List<Point> up = new ArrayList<>();
        Map<String, List<Point>> perStep = new LinkedHashMap<>();
        for (String metric : List.of("loss", "achieved", "sent", "lost")) {
            perStep.put(metric, new ArrayList<>());
        }
        SummarySnapshot.Builder delay = SummarySnapshot.builder().name("lossprobe_mesh_delay_seconds")
            .help("One-way delay from the intended send time, per pair and step (quantile 1 is the maximum)");
        List<Labels> delays = new ArrayList<>();
        for (MeshResult.Pair p : mesh.pairs()) {
            Labels pair = named.merge(Labels.of("source", p.source(), "target", p.target()));
            up.add(new Point(pair, p.measured() ? 1 : 0));
            if (!p.measured()) {
                continue;
            }
            for (StepResult s : p.result().steps()) {
                StepMetrics m = StepMetrics.of(p.result(), s);
                Labels l = pair.add("transport", m.transport()).add("offered_rate", Exposition.rateLabel(m.level()));
                perStep.get("loss").add(new Point(l, m.lossRatio()));
                perStep.get("achieved").add(new Point(l, m.achievedRate()));
                perStep.get("sent").add(new Point(l, m.sent()));
                perStep.get("lost").add(new Point(l, m.lost()));
                SummarySnapshot.SummaryDataPointSnapshot point = Exposition.summary(l, s.delay());
                if (point != null && !delays.contains(l)) {
                    delays.add(l);
                    delay.dataPoint(point);
                }
            }
        }
        metrics.add(gauge("lossprobe_mesh_pair_up", "1 when the pair ran and measured, 0 when it failed, was "
            + "skipped or has no data", null, up));
        metrics.add(gauge("lossprobe_mesh_loss_ratio", "Messages lost as a fraction of sent, per pair and step",
            Unit.RATIO, perStep.get("loss")));
        metrics.add(gauge("lossprobe_mesh_achieved_messages_per_second", "Messages received per second, per pair "
            + "and step", null, perStep.get("achieved")));
        if (!delays.isEmpty()) {
            metrics.add(delay.build());
        }
        metrics.add(gauge("lossprobe_mesh_sent_messages", "Messages sent in the step's window (the last mesh's)",
            null, perStep.get("sent")));
        metrics.add(gauge("lossprobe_mesh_lost_messages", "Messages sent and never received within Tmax (the last "
            + "mesh's)", null, perStep.get("lost")));
        metrics.add(gauge("lossprobe_mesh_start_timestamp_seconds", "When the mesh started, Unix time",
            Unit.SECONDS, List.of(new Point(named, epochSeconds(mesh.startedAt())))));
        metrics.add(gauge("lossprobe_mesh_end_timestamp_seconds", "When the mesh finished, Unix time",
            Unit.SECONDS, List.of(new Point(named, epochSeconds(mesh.finishedAt())))));
        check.ifPresent(c -> {
            List<Point> passed = c.pairs().stream().map(p -> new Point(named.merge(Labels.of("source",
                p.pair().source(), "target", p.pair().target())), p.passed() ? 1 : 0)).toList();
            metrics.add(gauge("lossprobe_mesh_check_passed", "1 when the pair held every limit of the policy, else 0",
                null, passed));
            metrics.add(gauge("lossprobe_mesh_check_failures", "Pairs that broke a limit or did not run", null,
                List.of(new Point(named, c.failures().size()))));
        });
        return Exposition.text(metrics);
    }

    /** Writes the file atomically (the textfile collector never reads half of it). */
    public static void write(Path file, MeshResult mesh, Optional<MeshCheck.Outcome> check) throws IOException {
        write(file, mesh, null, check);
    }

    /** Writes the file atomically, every series labelled {@code name} (null: the default). */
    public static void write(Path file, MeshResult mesh, String name, Optional<MeshCheck.Outcome> check)
        throws IOException {
        io.lossprobe.core.result.ResultFiles.writeAtomically(file,
                render(mesh, name, check).getBytes(StandardCharsets.UTF_8));
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
            GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(p.labels()).value(Exposition.round(p.value()))
                .build()));
        return b.build();
    }
}
