package io.lossprobe.analysis;

import io.lossprobe.core.result.StepResult;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The summary table: one row per run, transport and level, with the columns of the reference RPC benchmark
 * tables (TPS, mean latency, CPU %, NIC in/out Mb/s and packets/s) plus loss and p99. Rendered as Markdown, CSV
 * or an HTML table.
 */
public final class SummaryTable {

    /** One row: which run (its start time), and the step's metrics. */
    public record Row(String startedAt, String file, StepMetrics m) {
    }

    /**
     * A column; {@code value} is "" where the step has no such figure, printed as {@code blank} in Markdown and
     * HTML and as an empty cell in CSV.
     */
    private record Column(String title, String csvName, boolean numeric, Function<Row, String> value, String blank) {
        Column(String title, String csvName, boolean numeric, Function<Row, String> value) {
            this(title, csvName, numeric, value, "");
        }

        String text(Row r) {
            String v = value.apply(r);
            return v.isEmpty() ? blank : v;
        }
    }

    private static final List<Column> COLUMNS = List.of(
        new Column("started", "started_at", false, Row::startedAt),
        new Column("transport", "transport", false, r -> r.m.transport()),
        new Column("level", "level", false, r -> r.m.level()),
        new Column("achieved TPS", "achieved_msgs_per_s", true, r -> Fmt.num(r.m.achievedRate(), 0)),
        // A step where nothing arrived has no delay at all, which a 0 would hide.
        new Column("mean ms", "mean_delay_ms", true, r -> Fmt.num(r.m.meanDelayMs(), 3), Fmt.NO_DELAY),
        new Column("p99 ms", "p99_delay_ms", true, r -> Fmt.num(r.m.p99DelayMs(), 3), Fmt.NO_DELAY),
        // Between hosts every delay is true to this bound (the clock offset estimate's); blank on one host.
        new Column("clock +- ms", "delay_uncertainty_ms", true, r -> Fmt.num(r.m.delayUncertaintyMs(), 3)),
        new Column("CPU %", "process_cpu_percent", true, r -> Fmt.num(r.m.processCpuPercent(), 1)),
        new Column("host CPU %", "host_cpu_percent", true, r -> Fmt.num(r.m.hostCpuPercent(), 1)),
        new Column("NIC", "nic", false, r -> r.m.nicInterface()),
        new Column("NIC in Mb/s", "nic_in_mbit_per_s", true, r -> Fmt.num(r.m.nicInMbps(), 2)),
        new Column("NIC out Mb/s", "nic_out_mbit_per_s", true, r -> Fmt.num(r.m.nicOutMbps(), 2)),
        new Column("NIC in pkt/s", "nic_in_packets_per_s", true, r -> Fmt.num(r.m.nicInPacketsPerSecond(), 0)),
        new Column("NIC out pkt/s", "nic_out_packets_per_s", true, r -> Fmt.num(r.m.nicOutPacketsPerSecond(), 0)),
        new Column("loss %", "loss_percent", true, r -> Fmt.num(r.m.lossPercent(), 4)),
        new Column("k-drops", "kernel_socket_drops", true, r -> Fmt.num(r.m.socketDrops(), 0)),
        new Column("retrans/1k", "retransmits_per_1k", true, r -> Fmt.num(r.m.retransmitsPer1k(), 3)),
        new Column("NAKs/1k", "naks_per_1k", true, r -> Fmt.num(r.m.naksPer1k(), 3)),
        new Column("warnings", "warnings", true, r -> r.m.warnings() == 0 ? "" : Integer.toString(r.m.warnings())),
        new Column("flags", "flags", false, r -> String.join(",", java.util.stream.Stream.of(
            r.m.saturated() ? "saturated" : "", r.m.hostCpuSaturated() ? "host-cpu" : "")
            .filter(f -> !f.isEmpty()).toList())));

    /** After the level when a run stepped through several message sizes ({@code --sizes}); else not shown. */
    private static final Column SIZE = new Column("size B", "message_size_bytes", true,
        r -> r.m.messageSize() > 0 ? Integer.toString(r.m.messageSize()) : "");

    private final List<Row> rows;
    private final List<Column> columns;

    private SummaryTable(List<Row> rows, boolean sized) {
        this.rows = List.copyOf(rows);
        List<Column> cs = new ArrayList<>(COLUMNS);
        if (sized) {
            cs.add(cs.indexOf(COLUMNS.get(2)) + 1, SIZE);
        }
        this.columns = List.copyOf(cs);
    }

    /** Every step of every run, runs in the order given (oldest first from {@link LoadedResult#readAll}). */
    public static SummaryTable of(List<LoadedResult> results) {
        List<Row> rows = new ArrayList<>();
        for (LoadedResult r : results) {
            for (StepResult s : r.run().steps()) {
                rows.add(new Row(r.run().startedAt() == null ? "" : r.run().startedAt(), r.file().toString(),
                    StepMetrics.of(r.run(), s)));
            }
        }
        return new SummaryTable(rows, results.stream().anyMatch(LoadedResult::sized));
    }

    public List<Row> rows() {
        return rows;
    }

    public String markdown() {
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

    /** An HTML table; {@code withStart} keeps the "started" column (useful only over several runs). */
    public String html(boolean withStart) {
        StringBuilder sb = new StringBuilder("<table class=\"summary\">\n<thead><tr>");
        for (Column c : columns) {
            if (withStart || !c.csvName.equals("started_at")) {
                sb.append("<th>").append(Fmt.html(c.title)).append("</th>");
            }
        }
        sb.append("</tr></thead>\n<tbody>\n");
        for (Row r : rows) {
            sb.append(r.m.lost() > 0 ? "<tr class=\"lossy\">" : "<tr>");
            for (Column c : columns) {
                if (withStart || !c.csvName.equals("started_at")) {
                    sb.append(c.numeric ? "<td class=\"n\">" : "<td>").append(Fmt.html(c.text(r)))
                        .append("</td>");
                }
            }
            sb.append("</tr>\n");
        }
        return sb.append("</tbody>\n</table>\n").toString();
    }
}
