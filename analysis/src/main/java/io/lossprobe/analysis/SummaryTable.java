package io.lossprobe.analysis;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.StepResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The summary table: one row per run, transport and level. Markdown and CSV give it as one table, with the columns
 * of the reference RPC benchmark tables (rate, mean delay, CPU %, NIC in/out Mb/s and packets/s) plus loss, p99,
 * repairs, warnings and flags; the CSV's column names and order are machine-read and stay as they are. HTML gives
 * it as two tables that each fit a screen: {@link #deliveryHtml delivery} (what was offered, sent, received and
 * lost) and {@link #speedHtml speed and cost} (rates, delay, CPU, NIC), every figure of the one table in one of
 * them.
 */
public final class SummaryTable {

    /** One row: which run (its start time), the step's metrics and its counts. */
    public record Row(String startedAt, String file, StepMetrics m, Counts counts) {
    }

    /**
     * A column; {@code value} is "" where the step has no such figure, printed as {@code blank} in Markdown and
     * HTML and as an empty cell in CSV.
     */
    private record Column(String title, String csvName, boolean numeric, Function<Row, String> value, String blank) {
        Column(String title, String csvName, boolean numeric, Function<Row, String> value) {
            this(title, csvName, numeric, value, "");
        }

        /** A count of the step's messages, for HTML only (grouped thousands). */
        static Column count(String title, Function<Counts, Long> value) {
            return new Column(title, null, true, r -> String.format(Locale.ROOT, "%,d", value.apply(r.counts)));
        }

        String text(Row r) {
            String v = value.apply(r);
            return v.isEmpty() ? blank : v;
        }
    }

    private static final Column STARTED = new Column("started", "started_at", false, Row::startedAt);
    private static final Column TRANSPORT = new Column("transport", "transport", false, r -> r.m.transport());
    private static final Column LEVEL = new Column("level", "level", false, r -> r.m.level());
    /**
     * Messages received per second over the window: the achieved receive rate. Not TPS, which counts round trips
     * (echo mode's replies/s, {@link #TPS}).
     */
    private static final Column RECEIVED_RATE = new Column("received/s", "achieved_msgs_per_s", true,
        r -> Fmt.num(r.m.achievedRate(), 0));
    // A step where nothing arrived has no delay at all, which a 0 would hide.
    private static final Column MEAN = new Column("mean ms", "mean_delay_ms", true,
        r -> Fmt.num(r.m.meanDelayMs(), 3), Fmt.NO_DELAY);
    private static final Column P99 = new Column("p99 ms", "p99_delay_ms", true, r -> Fmt.num(r.m.p99DelayMs(), 3),
        Fmt.NO_DELAY);
    // Between hosts every delay is true to this bound (the clock offset estimate's); blank on one host.
    private static final Column CLOCK = new Column("clock +- ms", "delay_uncertainty_ms", true,
        r -> Fmt.num(r.m.delayUncertaintyMs(), 3));
    private static final Column CPU = new Column("CPU %", "process_cpu_percent", true,
        r -> Fmt.num(r.m.processCpuPercent(), 1));
    private static final Column HOST_CPU = new Column("host CPU %", "host_cpu_percent", true,
        r -> Fmt.num(r.m.hostCpuPercent(), 1));
    private static final Column NIC = new Column("NIC", "nic", false, r -> r.m.nicInterface());
    private static final Column NIC_IN = new Column("NIC in Mb/s", "nic_in_mbit_per_s", true,
        r -> Fmt.num(r.m.nicInMbps(), 2));
    private static final Column NIC_OUT = new Column("NIC out Mb/s", "nic_out_mbit_per_s", true,
        r -> Fmt.num(r.m.nicOutMbps(), 2));
    private static final Column NIC_IN_PKT = new Column("NIC in pkt/s", "nic_in_packets_per_s", true,
        r -> Fmt.num(r.m.nicInPacketsPerSecond(), 0));
    private static final Column NIC_OUT_PKT = new Column("NIC out pkt/s", "nic_out_packets_per_s", true,
        r -> Fmt.num(r.m.nicOutPacketsPerSecond(), 0));
    private static final Column LOSS = new Column("loss %", "loss_percent", true, r -> Fmt.num(r.m.lossPercent(), 4));
    private static final Column K_DROPS = new Column("k-drops", "kernel_socket_drops", true,
        r -> Fmt.num(r.m.socketDrops(), 0));
    private static final Column RETRANSMITS = new Column("retrans/1k", "retransmits_per_1k", true,
        r -> Fmt.num(r.m.retransmitsPer1k(), 3));
    private static final Column NAKS = new Column("NAKs/1k", "naks_per_1k", true, r -> Fmt.num(r.m.naksPer1k(), 3));
    private static final Column WARNINGS = new Column("warnings", "warnings", true,
        r -> r.m.warnings() == 0 ? "" : Integer.toString(r.m.warnings()));
    private static final Column FLAGS = new Column("flags", "flags", false, r -> String.join(",", Stream.of(
        r.m.saturated() ? "saturated" : "", r.m.hostCpuSaturated() ? "host-cpu" : "")
        .filter(f -> !f.isEmpty()).toList()));

    /*
     * run --probe echo: the probe flow's round trip beside the step and its requests without a reply. Shown only
     * when some step has a probe (after everything else in Markdown and CSV, so the CSV's existing columns keep
     * their places); empty for a step without one, and for the round trip of a probe that got no reply.
     */
    private static final Column PROBE_P50 = new Column("probe p50 ms", "probe_rtt_p50_ms", true,
        r -> Fmt.num(r.m.probeRttMs()[0], 3));
    private static final Column PROBE_P99 = new Column("probe p99 ms", "probe_rtt_p99_ms", true,
        r -> Fmt.num(r.m.probeRttMs()[2], 3));
    private static final Column PROBE_LOST = new Column("probe lost", "probe_round_trip_lost", true,
        r -> Fmt.num(r.m.probeLost(), 0));
    private static final List<Column> PROBE = List.of(PROBE_P50, PROBE_P99, PROBE_LOST);

    /** Markdown and CSV: every column in one table (CSV readers rely on these names and this order). */
    private static final List<Column> COLUMNS = List.of(STARTED, TRANSPORT, LEVEL, RECEIVED_RATE, MEAN, P99, CLOCK,
        CPU, HOST_CPU, NIC, NIC_IN, NIC_OUT, NIC_IN_PKT, NIC_OUT_PKT, LOSS, K_DROPS, RETRANSMITS, NAKS, WARNINGS,
        FLAGS);

    /** HTML, what became of the messages: offered = sent + behind + refused, sent = received + lost. */
    private static final List<Column> DELIVERY = List.of(STARTED, TRANSPORT, LEVEL,
        Column.count("offered", Counts::scheduled), Column.count("sent", Counts::sent),
        Column.count("behind", Counts::behind), Column.count("refused", Counts::sendFailed),
        Column.count("received", Counts::received), Column.count("lost", Counts::lost), LOSS,
        Column.count("late", Counts::late), Column.count("duplicates", Counts::duplicates),
        Column.count("reordered", Counts::reordered), K_DROPS, RETRANSMITS, NAKS, WARNINGS,
        new Column("flags", null, false, r -> r.m.saturated() ? "saturated" : ""));

    /** Echo mode: replies received per second, transactions per second as RPC benchmarks count them. */
    private static final Column TPS = new Column("TPS (replies/s)", null, true, r -> Fmt.num(r.m.tps(), 0));

    /** HTML, how fast and at what cost: rates, one-way delay, CPU and the busiest interface. */
    private static final List<Column> SPEED = List.of(STARTED, TRANSPORT, LEVEL, RECEIVED_RATE,
        new Column("sent/s", null, true, r -> Fmt.num(r.m.achievedSendRate(), 0)), TPS, MEAN,
        new Column("p50 ms", null, true, r -> Fmt.num(r.m.p50DelayMs(), 3), Fmt.NO_DELAY), P99, CLOCK, CPU,
        HOST_CPU, NIC, NIC_IN, NIC_OUT, NIC_IN_PKT, NIC_OUT_PKT,
        new Column("flags", null, false, r -> r.m.hostCpuSaturated() ? "host-cpu" : ""));

    /** After the level when a run stepped through several message sizes ({@code --sizes}); else not shown. */
    private static final Column SIZE = new Column("size B", "message_size_bytes", true,
        r -> r.m.messageSize() > 0 ? Integer.toString(r.m.messageSize()) : "");

    private final List<Row> rows;
    private final boolean sized;

    private SummaryTable(List<Row> rows, boolean sized) {
        this.rows = List.copyOf(rows);
        this.sized = sized;
    }

    /** Every step of every run, runs in the order given (oldest first from {@link LoadedResult#readAll}). */
    public static SummaryTable of(List<LoadedResult> results) {
        List<Row> rows = new ArrayList<>();
        for (LoadedResult r : results) {
            for (StepResult s : r.run().steps()) {
                rows.add(new Row(r.run().startedAt() == null ? "" : r.run().startedAt(), r.file().toString(),
                    StepMetrics.of(r.run(), s), s.counts()));
            }
        }
        return new SummaryTable(rows, results.stream().anyMatch(LoadedResult::sized));
    }

    /** Whether a step of the runs had a {@code --probe} flow beside it (the table then has the probe columns). */
    public boolean hasProbe() {
        return rows.stream().anyMatch(r -> r.m.probe());
    }

    public List<Row> rows() {
        return rows;
    }

    /** {@code base} with the size column after the level when the runs stepped through several sizes. */
    private List<Column> columns(List<Column> base) {
        List<Column> cs = new ArrayList<>(base);
        if (sized) {
            cs.add(cs.indexOf(LEVEL) + 1, SIZE);
        }
        return cs;
    }

    /**
     * {@link #columns(List)} with the probe columns when a step had a probe: after {@code probeAfter}, or at the end
     * when it is null.
     */
    private List<Column> columns(List<Column> base, Column probeAfter) {
        List<Column> cs = columns(base);
        if (hasProbe()) {
            cs.addAll(probeAfter == null ? cs.size() : cs.indexOf(probeAfter) + 1, PROBE);
        }
        return cs;
    }

    public String markdown() {
        List<Column> columns = columns(COLUMNS, null);
        StringBuilder sb = new StringBuilder();
        sb.append('|');
        for (Column c : columns) {
            sb.append(' ').append(c.title).append(" |");
        }
        sb.append("\n|");
        for (Column c : columns) {
            sb.append(c.numeric ? "---:|" : "---|");
        }
        sb.append('\n');
        for (Row r : rows) {
            sb.append('|');
            for (Column c : columns) {
                // Markdown renders inline HTML: angle brackets from a result file are escaped.
                sb.append(' ').append(Fmt.markdown(c.text(r)))
                    .append(" |");
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    public String csv() {
        List<Column> columns = columns(COLUMNS, null);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < columns.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(columns.get(i).csvName);
        }
        sb.append('\n');
        for (Row r : rows) {
            for (int i = 0; i < columns.size(); i++) {
                sb.append(i == 0 ? "" : ",").append(Fmt.csv(columns.get(i).value.apply(r)));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /** Both HTML tables, {@link #deliveryHtml} then {@link #speedHtml}. */
    public String html(boolean withStart) {
        return deliveryHtml(withStart) + speedHtml(withStart);
    }

    /**
     * What became of the messages, per step: offered, sent, behind, refused, received, lost, loss %, late,
     * duplicates, reordered, kernel drops, repairs, warnings, and the sender's saturated flag. {@code withStart}
     * keeps the "started" column (useful only over several runs).
     */
    public String deliveryHtml(boolean withStart) {
        return html(columns(DELIVERY), withStart, "delivery");
    }

    /**
     * How fast and at what cost, per step: received/s and sent/s (TPS too in echo mode), one-way delay mean, p50
     * and p99 with the clock bound, the probe's round trip and lost requests (when a step had a probe), CPU, the
     * busiest interface's traffic, and the host-cpu flag.
     */
    public String speedHtml(boolean withStart) {
        List<Column> cs = columns(SPEED, CLOCK);
        if (rows.stream().noneMatch(r -> r.m.echo())) {
            cs.remove(TPS);
        }
        return html(cs, withStart, "speed");
    }

    private String html(List<Column> columns, boolean withStart, String kind) {
        List<Column> shown = columns.stream().filter(c -> withStart || c != STARTED).toList();
        StringBuilder sb = new StringBuilder("<table class=\"summary ").append(kind).append("\">\n<thead><tr>");
        for (Column c : shown) {
            sb.append("<th>").append(Fmt.html(c.title)).append("</th>");
        }
        sb.append("</tr></thead>\n<tbody>\n");
        for (Row r : rows) {
            sb.append(r.m.lost() > 0 ? "<tr class=\"lossy\">" : "<tr>");
            for (Column c : shown) {
                sb.append(c.numeric ? "<td class=\"n\">" : "<td>").append(Fmt.html(c.text(r))).append("</td>");
            }
            sb.append("</tr>\n");
        }
        return sb.append("</tbody>\n</table>\n").toString();
    }
}
