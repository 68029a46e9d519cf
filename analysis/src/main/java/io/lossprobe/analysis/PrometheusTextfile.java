package io.lossprobe.analysis;

import io.lossprobe.core.result.Echo;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.ProbeResult;
import io.lossprobe.core.result.ReceiverResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.result.StepResult;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The last run (and its check, when a policy was applied) as a Prometheus text file for node_exporter's textfile
 * collector. Every metric is a gauge named for what it is, {@code lossprobe_last_run_...} with its unit in the name
 * (seconds, ratio, messages, messages_per_second): a cron job's textfile holds the last run's values, which a
 * counter's {@code _total} (reset every run) would misrepresent. The delay distributions are summaries
 * ({@code quantile} labels, {@code _count} and {@code _sum} of the last run's step). Every series carries the labels
 * that tell two jobs apart ({@code name}, {@code target}, {@code mode}, {@code direction}, {@code size_bytes}), step
 * series also {@code transport} and {@code offered_rate}. Written with the Prometheus client library's own text
 * format writer and put in place by a rename, so the collector never reads half a file. See docs/check.md for the
 * list.
 */
public final class PrometheusTextfile {
    /** Every state {@code lossprobe_last_run_status} has a series for (1 for the run's, 0 for the others). */
    static final List<String> STATUSES = Stream.of(RunStatus.COMPLETE, RunStatus.INTERRUPTED, RunStatus.FAILED,
        RunStatus.RUNNING).map(RunStatus::json).toList();

    private PrometheusTextfile() {
    }

    /** The textfile of a check: the check's outcome and its run's numbers, labels from the result. */
    public static String render(CheckReport report) {
        return render(report.run(), RunLabels.of(report.run().run()), Optional.of(report));
    }

    /** The text exposition of {@code run} under its default name, with {@code check} when given. */
    public static String render(LoadedResult run, RunLabels labels, Optional<CheckReport> check) {
        return render(run, labels, null, check);
    }

    /** The {@code name} label of a run when {@code --name} is not given: {@code plan-} and 8 hex digits. */
    public static String defaultName(RunResult run) {
        return Exposition.defaultName(run.plan());
    }

    /**
     * The text exposition (Prometheus text format 0.0.4) of {@code run}, with {@code check} when given; every series
     * labelled {@code name} (null or blank: {@link #defaultName}).
     */
    public static String render(LoadedResult run, RunLabels labels, String name, Optional<CheckReport> check) {
        Metrics m = new Metrics(labels, Exposition.name(name, defaultName(run.run())));
        RunResult r = run.run();
        String status = String.valueOf(r.status());
        for (String s : STATUSES) {
            m.runLevel("lossprobe_last_run_status", "1 for the last run's status (complete, interrupted, failed, "
                + "running), 0 for the others", l -> l.add("status", s), s.equals(status) ? 1 : 0);
        }
        Instant started = instant(r.startedAt());
        Instant finished = instant(r.finishedAt());
        if (started != null) {
            m.runLevel("lossprobe_last_run_start_timestamp_seconds", "When the last run started, Unix time",
                l -> l, started.toEpochMilli() / 1e3);
        }
        if (finished != null) {
            m.runLevel("lossprobe_last_run_end_timestamp_seconds", "When the last run finished, Unix time",
                l -> l, finished.toEpochMilli() / 1e3);
        }
        if (started != null && finished != null) {
            m.runLevel("lossprobe_last_run_duration_seconds", "How long the last run took, warm-ups and drains "
                + "included", l -> l, (finished.toEpochMilli() - started.toEpochMilli()) / 1e3);
        }
        m.runLevel("lossprobe_last_run_steps", "Steps the last run completed", l -> l, r.steps().size());
        for (StepResult s : r.steps()) {
            step(m, r, s);
        }
        check.ifPresent(c -> check(m, c));
        return m.text();
    }

    /** Writes the file atomically (temporary file in the same directory, then rename), world-readable. */
    public static void write(Path file, LoadedResult run, RunLabels labels, Optional<CheckReport> check)
        throws IOException {
        write(file, run, labels, null, check);
    }

    /** Writes the file atomically, every series labelled {@code name} (null: the default). */
    public static void write(Path file, LoadedResult run, RunLabels labels, String name, Optional<CheckReport> check)
        throws IOException {
        io.lossprobe.core.result.ResultFiles.writeAtomically(file,
            render(run, labels, name, check).getBytes(StandardCharsets.UTF_8));
    }

    /** The textfile of a check, labels from the result. */
    public static void write(Path file, CheckReport report) throws IOException {
        write(file, report.run(), RunLabels.of(report.run().run()), Optional.of(report));
    }

    private static void step(Metrics m, RunResult r, StepResult s) {
        StepMetrics sm = StepMetrics.of(r, s);
        Function<Labels, Labels> at = l -> {
            Labels with = l.add("transport", s.transport()).add("offered_rate",
                Exposition.rateLabel(s.level().toString()));
            if (s.direction() != null) {
                with = with.add("direction", s.direction()); // run --bidir: forward and reverse apart
            }
            return s.messageSize() == null ? with : with.add("size_bytes", Integer.toString(s.messageSize()));
        };
        long sent = s.counts().sent();
        m.runLevel("lossprobe_last_run_loss_ratio", "Messages lost as a fraction of sent (0..1)", at,
            lossRatio(s.counts()));
        if (s.targetRate() > 0) {
            // A "max" level has no offered rate: what it reached is the sent rate, reported as such.
            m.runLevel("lossprobe_last_run_offered_messages_per_second", "The level's target rate", at,
                s.targetRate());
        }
        m.runLevel("lossprobe_last_run_sent_messages_per_second", "Messages sent per second over the window", at,
            s.achievedSendRate());
        m.runLevel("lossprobe_last_run_received_messages_per_second", "Messages received per second over the "
            + "window", at, s.achievedReceiveRate());
        m.runLevel("lossprobe_last_run_window_seconds", "The measured window as it ran", at, s.windowNs() / 1e9);
        m.runLevel("lossprobe_last_run_sent_messages", "Messages sent in the window", at, sent);
        m.runLevel("lossprobe_last_run_received_messages", "Distinct messages received", at, s.counts().received());
        m.runLevel("lossprobe_last_run_lost_messages", "Messages sent and not received within Tmax", at,
            s.counts().lost());
        m.runLevel("lossprobe_last_run_duplicate_messages", "Duplicate arrivals", at, s.counts().duplicates());
        m.runLevel("lossprobe_last_run_reordered_messages", "Arrivals below the highest sequence seen", at,
            s.counts().reordered());
        if (s.socketDrops() != null) {
            m.runLevel("lossprobe_last_run_socket_drop_messages", "Datagrams the kernel dropped at the receiving "
                + "sockets", at, s.socketDrops());
        }
        m.runLevel("lossprobe_last_run_saturated", "1 when the sender fell more than 1% short of the target", at,
            s.saturated() ? 1 : 0);
        if (s.cpu() != null) {
            m.runLevel("lossprobe_last_run_process_cpu_cores", "Cores the lossprobe process kept busy on average "
                + "over the step", at, s.cpu().processPercent() / 100.0);
        }
        m.runLevel("lossprobe_last_run_retransmits", "Retransmissions in the step (TCP, Aeron)", at,
            sm.retransmits());
        m.runLevel("lossprobe_last_run_naks", "NAKs in the step (Aeron)", at, sm.naks());
        m.summary("lossprobe_last_run_delay_seconds", "One-way delay from the intended send time over the step's "
            + "window (quantile 1 is the maximum)", at, s.delay());
        if (s.delay() != null && s.delay().uncertaintyNs() != null) {
            m.runLevel("lossprobe_last_run_delay_uncertainty_seconds", "Between hosts: every one-way delay is true "
                + "to plus or minus this (the clock offset's bound)", at, s.delay().uncertaintyNs() / 1e9);
        }
        Echo e = s.echo();
        if (e != null) {
            m.runLevel("lossprobe_last_run_transactions_per_second", "Echo mode: replies received per second", at,
                e.tps());
            m.summary("lossprobe_last_run_round_trip_seconds", "Echo mode: round trip from the request's "
                + "intended send time (quantile 1 is the maximum)", at, e.rtt());
            m.runLevel("lossprobe_last_run_echo_lost_messages", "Echo mode: requests lost on the way out "
                + "(leg=request) and replies lost on the way back (leg=reply)", l -> at.apply(l).add("leg",
                "request"), e.requestsLost());
            m.runLevel("lossprobe_last_run_echo_lost_messages", "", l -> at.apply(l).add("leg", "reply"),
                e.repliesLost());
        }
        probe(m, s.probe(), at);
        receivers(m, s, at);
    }

    /** Lost as a fraction of sent; NaN (no value) when nothing was sent. */
    private static double lossRatio(io.lossprobe.core.result.Counts c) {
        return c.sent() == 0 ? Double.NaN : (double) c.lost() / c.sent();
    }

    /**
     * A multicast step: each receiver's own figures as the {@code lossprobe_last_run_receiver_...} gauges with a
     * {@code receiver} label, and which one is the worst (whose figures the step's series above are). Families of
     * their own, so an alert or a sum over a step's series counts no receiver twice (docs/multicast.md).
     */
    private static void receivers(Metrics m, StepResult s, Function<Labels, Labels> at) {
        if (s.receivers() == null) {
            return;
        }
        for (ReceiverResult r : s.receivers()) {
            Function<Labels, Labels> of = l -> at.apply(l).add("receiver", r.receiver());
            m.runLevel("lossprobe_last_run_receiver_worst", "Multicast: 1 for the receiver whose figures the step's "
                + "series are (the one that lost the most), 0 for the others", of,
                r.receiver().equals(s.worstReceiver()) ? 1 : 0);
            m.runLevel("lossprobe_last_run_receiver_loss_ratio", "Multicast: messages this receiver lost as a "
                + "fraction of sent (0..1)", of, lossRatio(r.counts()));
            m.runLevel("lossprobe_last_run_receiver_received_messages", "Multicast: distinct messages this receiver "
                + "received", of, r.counts().received());
            m.runLevel("lossprobe_last_run_receiver_lost_messages", "Multicast: messages sent and not received by "
                + "this receiver within Tmax", of, r.counts().lost());
            m.runLevel("lossprobe_last_run_receiver_duplicate_messages", "Multicast: duplicate arrivals at this "
                + "receiver", of, r.counts().duplicates());
            m.runLevel("lossprobe_last_run_receiver_reordered_messages", "Multicast: arrivals at this receiver "
                + "below the highest sequence it had seen", of, r.counts().reordered());
            if (r.socketDrops() != null) {
                m.runLevel("lossprobe_last_run_receiver_socket_drop_messages", "Multicast: datagrams the kernel "
                    + "dropped at this receiver's sockets", of, r.socketDrops());
            }
            m.summary("lossprobe_last_run_receiver_delay_seconds", "Multicast: one-way delay to this receiver from "
                + "the intended send time (quantile 1 is the maximum)", of, r.delay());
        }
    }

    /**
     * {@code run --probe echo}: the probe flow's round trip beside the step and its requests without a reply, only
     * for a step that had a probe.
     */
    private static void probe(Metrics m, ProbeResult p, Function<Labels, Labels> at) {
        if (p == null || p.echo() == null) {
            return;
        }
        m.summary("lossprobe_last_run_probe_round_trip_seconds", "run --probe: round trip of the low-rate echo "
            + "flow beside the step, from the request's intended send time (quantile 1 is the maximum)", at,
            p.echo().rtt());
        m.runLevel("lossprobe_last_run_probe_lost_messages", "run --probe: the probe's requests without a reply "
            + "before the step closed", at, p.echo().roundTripLost());
    }

    /** A series' transport label, and its direction's ({@code udp reverse}: run --bidir) when it has one. */
    private static Labels seriesLabels(Labels l, String series) {
        String[] parts = series.split(" ", 2);
        return parts.length == 1 ? l.add("transport", series)
            : l.add("transport", parts[0]).add("direction", parts[1]);
    }

    private static void check(Metrics m, CheckReport c) {
        m.runLevel("lossprobe_last_check_passed", "1 when the last check held every limit, else 0", l -> l,
            c.passed() ? 1 : 0);
        m.runLevel("lossprobe_last_check_failures", "Limits the last check found broken", l -> l,
            c.failures().size());
        for (CheckReport.Evaluation e : c.evaluations()) {
            m.runLevel("lossprobe_last_check_limit_passed", "1 when this limit held in the last check, else 0",
                l -> seriesLabels(l, e.transport()).add("offered_rate", Exposition.rateLabel(e.level()))
                    .add("metric", e.metric()),
                e.passed() ? 1 : 0);
        }
    }

    private static Instant instant(String text) {
        try {
            return text == null ? null : Instant.parse(text);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** Gauges and summaries gathered by name, in first-seen order, each point with the run's labels plus its own. */
    private static final class Metrics {
        private final Labels base;
        private final String sizeBytes;
        private final Map<String, GaugeSnapshot.Builder> gauges = new LinkedHashMap<>();
        private final Map<String, SummarySnapshot.Builder> summaries = new LinkedHashMap<>();
        private final List<String> order = new ArrayList<>();
        private final Map<String, List<Labels>> seen = new LinkedHashMap<>();

        Metrics(RunLabels labels, String name) {
            this.base = Labels.of("name", name, "target", labels.target(), "mode", labels.mode(), "direction",
                labels.direction());
            this.sizeBytes = Integer.toString(labels.sizeBytes());
        }

        void runLevel(String name, String help, Function<Labels, Labels> labels, double value) {
            if (Double.isNaN(value) || Double.isInfinite(value)) {
                return;
            }
            Labels l = first(name, labels);
            if (l != null) {
                gauges.computeIfAbsent(name, n -> GaugeSnapshot.builder().name(n).help(help)).dataPoint(
                    GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(l).value(round(value)).build());
            }
        }

        void summary(String name, String help, Function<Labels, Labels> labels, Latency latency) {
            if (latency == null || latency.count() == 0) {
                return;
            }
            Labels l = first(name, labels);
            if (l != null) {
                summaries.computeIfAbsent(name, n -> SummarySnapshot.builder().name(n).help(help))
                    .dataPoint(Exposition.summary(l, latency));
            }
        }

        /** The point's labels, or null when the series has a point already. */
        private Labels first(String name, Function<Labels, Labels> labels) {
            Labels l = labels.apply(base);
            if (!l.contains("size_bytes")) {
                l = l.add("size_bytes", sizeBytes); // a step of a run at several sizes says its own
            }
            if (!seen.containsKey(name)) {
                order.add(name);
            }
            List<Labels> names = seen.computeIfAbsent(name, n -> new ArrayList<>());
            if (names.contains(l)) {
                return null; // two steps of one transport at one level: the first is kept (a series is unique)
            }
            names.add(l);
            return l;
        }

        String text() {
            List<MetricSnapshot> all = new ArrayList<>();
            for (String name : order) {
                all.add(gauges.containsKey(name) ? gauges.get(name).build() : summaries.get(name).build());
            }
            return Exposition.text(all);
        }
    }

    static double round(double v) {
        return Exposition.round(v);
    }
}
