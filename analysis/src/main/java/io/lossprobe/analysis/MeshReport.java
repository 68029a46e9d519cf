package io.lossprobe.analysis;

import io.lossprobe.core.result.StepResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A mesh as source-by-destination matrices, one per transport and level: each cell is one pair's loss % and p99
 * delay, with each host's totals as a source (last column) and as a destination (last row), so a bad link, switch
 * port or host stands out as a red cell, row or column. As a self-contained HTML page (no scripts, no network),
 * Markdown or CSV (one row per pair and step). See docs/mesh.md.
 */
public final class MeshReport {
    private static final String STYLE = """
        body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}
        h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
        table{border-collapse:collapse;font-size:13px;margin:8px 0}
        th,td{border:1px solid #ccc;padding:3px 6px}th{background:#f0f0f0}
        td.n{text-align:right;font-variant-numeric:tabular-nums}
        table.matrix td{text-align:center;font-variant-numeric:tabular-nums;min-width:70px}
        td.zero{background:#e5f5e0}td.low{background:#fff7bc}td.mid{background:#fdae6b}td.high{background:#de2d26;color:#fff}
        td.down{background:#bdbdbd}td.nodata{background:repeating-linear-gradient(45deg,#eee,#eee 4px,#fff 4px,#fff 8px)}
        td.self{background:#fafafa;color:#aaa}td.total{font-weight:bold}
        .meta{font-size:13px;color:#555}.small{font-size:11px;color:#555}
        """;

    private final MeshResult mesh;
    private final List<String> names;
    /** (transport, level) in the order first met, e.g. "udp 10k". */
    private final Map<String, Map<String, StepMetrics>> cells = new LinkedHashMap<>();

    private MeshReport(MeshResult mesh) {
        this.mesh = mesh;
        this.names = mesh.hosts().stream().map(MeshResult.Host::name).toList();
        for (MeshResult.Pair p : mesh.pairs()) {
            if (p.result() == null) {
                continue;
            }
            for (StepResult s : p.result().steps()) {
                cells.computeIfAbsent(s.transport() + " " + s.level(), k -> new LinkedHashMap<>())
                    .put(key(p.source(), p.target()), StepMetrics.of(p.result(), s));
            }
        }
    }

    public static MeshReport of(MeshResult mesh) {
        return new MeshReport(mesh);
    }

    private static String key(String source, String target) {
        return source + "\u0000" + target;
    }

    /** What one cell shows. */
    private record Cell(String css, String text, String title) {
    }

    private Cell cell(String view, String source, String target) {
        if (source.equals(target)) {
            return new Cell("self", "\u00b7", "");
        }
        StepMetrics m = cells.get(view).get(key(source, target));
        MeshResult.Pair p = mesh.pair(source, target).orElse(null);
        if (m == null) {
            if (p == null) {
                return new Cell("", "", "not in this mesh's pairs");
            }
            String what = MeshResult.MISSING.equals(p.status()) ? "no data" : p.status();
            String css = MeshResult.FAILED.equals(p.status()) ? "down" : "nodata";
            return new Cell(css, what, source + " -> " + target + ": " + p.status()
                + (p.error() == null ? "" : ": " + p.error()));
        }
        return new Cell(lossClass(m.lost(), m.lossPercent()), Fmt.num(m.lossPercent(), 3) + "%",
            String.format(Locale.ROOT, "%s -> %s %s: sent %d, lost %d, p99 %s ms", source, target, view, m.sent(),
                m.lost(), Fmt.delayMs(m.p99DelayMs(), 3)));
    }

    private static String lossClass(long lost, double percent) {
        if (lost == 0) {
            return "zero";
        }
        return percent >= 1 ? "high" : percent >= 0.1 ? "mid" : "low";
    }

    /** Sent and lost over a host's pairs as a source (row) or as a destination (column). */
    private long[] total(String view, String host, boolean asSource) {
        long sent = 0;
        long lost = 0;
        for (String other : names) {
            StepMetrics m = cells.get(view).get(asSource ? key(host, other) : key(other, host));
            if (m != null) {
                sent += m.sent();
                lost += m.lost();
            }
        }
        return new long[] {sent, lost};
    }

    private Cell totalCell(String view, String host, boolean asSource) {
        long[] t = total(view, host, asSource);
        if (t[0] == 0) {
            return new Cell("total nodata", "", "no measured pair");
        }
        double pct = 100.0 * t[1] / t[0];
        return new Cell("total " + lossClass(t[1], pct), Fmt.num(pct, 3) + "%", String.format(Locale.ROOT,
            "%s as %s: sent %d, lost %d", host, asSource ? "source" : "destination", t[0], t[1]));
    }

    private String p99(String view, String source, String target) {
        StepMetrics m = cells.get(view).get(key(source, target));
        return m == null ? "" : Fmt.delayMs(m.p99DelayMs(), 2) + " ms";
    }

    /** The HTML page. */
    public String html() {
        StringBuilder sb = new StringBuilder(64 * 1024);
        sb.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>lossprobe mesh</title>\n")
            .append("<style>").append(STYLE).append("</style></head><body>\n<h1>lossprobe mesh</h1>\n");
        sb.append("<p class=\"meta\">").append(Fmt.html(summary())).append("</p>\n");
        sb.append("<p class=\"meta\">Rows send, columns receive. Each cell: the pair's loss % (over the step's "
            + "window) and p99 one-way delay. The last column is each host as a source, the last row each host as "
            + "a destination: a lossy link shows as a red row (its host's egress) or column (its ingress). "
            + "Grey: the pair failed (host down, refused); hatched: no data.</p>\n");
        if (cells.isEmpty()) {
            sb.append("<p>No pair produced measurements.</p>\n");
        }
        for (String view : cells.keySet()) {
            sb.append("<h2>").append(Fmt.html(view)).append("</h2>\n<table class=\"matrix\"><tr><th>source \\ "
                + "destination</th>");
            for (String n : names) {
                sb.append("<th>").append(Fmt.html(n)).append("</th>");
            }
            sb.append("<th>as source</th></tr>\n");
            for (String src : names) {
                sb.append("<tr><th>").append(Fmt.html(src)).append("</th>");
                for (String dst : names) {
                    Cell c = cell(view, src, dst);
                    String delay = p99(view, src, dst);
                    sb.append("<td class=\"").append(c.css()).append("\" title=\"").append(Fmt.html(c.title()))
                        .append("\">").append(Fmt.html(c.text()));
                    if (!delay.isEmpty()) {
                        sb.append("<br><span class=\"small\">p99 ").append(Fmt.html(delay)).append("</span>");
                    }
                    sb.append("</td>");
                }
                appendCell(sb, totalCell(view, src, true));
                sb.append("</tr>\n");
            }
            sb.append("<tr><th>as destination</th>");
            for (String dst : names) {
                appendCell(sb, totalCell(view, dst, false));
            }
            sb.append("<td></td></tr>\n</table>\n");
        }
        sb.append("<h2>Pairs</h2>\n<table><tr><th>source</th><th>destination</th><th>round</th><th>status</th>"
            + "<th>step</th><th>sent</th><th>lost</th><th>loss %</th><th>p99 ms</th><th>note</th></tr>\n");
        for (String[] row : rows()) {
            sb.append("<tr>");
            for (int i = 0; i < row.length; i++) {
                boolean numeric = i == 2 || (i >= 5 && i <= 8);
                sb.append(numeric ? "<td class=\"n\">" : "<td>").append(Fmt.html(row[i])).append("</td>");
            }
            sb.append("</tr>\n");
        }
        return sb.append("</table>\n</body></html>\n").toString();
    }

    private static void appendCell(StringBuilder sb, Cell c) {
        sb.append("<td class=\"").append(c.css()).append("\" title=\"").append(Fmt.html(c.title())).append("\">")
            .append(Fmt.html(c.text())).append("</td>");
    }

    /** The matrices as Markdown tables: "loss% / p99". */
    public String markdown() {
        StringBuilder sb = new StringBuilder();
        sb.append("# lossprobe mesh\n\n").append(Fmt.markdown(summary())).append("\n");
        for (String view : cells.keySet()) {
            sb.append("\n## ").append(Fmt.markdown(view))
                .append(": loss % / p99 delay, rows send, columns receive\n\n");
            sb.append("| source \\ destination |");
            names.forEach(n -> sb.append(' ').append(Fmt.markdown(n)).append(" |"));
            sb.append(" as source |\n|---|");
            names.forEach(n -> sb.append("---|"));
            sb.append("---|\n");
            for (String src : names) {
                sb.append("| ").append(Fmt.markdown(src)).append(" |");
                for (String dst : names) {
                    Cell c = cell(view, src, dst);
                    String delay = p99(view, src, dst);
                    sb.append(' ').append(Fmt.markdown(c.text())).append(delay.isEmpty() ? "" : " / " + delay)
                        .append(" |");
                }
                sb.append(' ').append(Fmt.markdown(totalCell(view, src, true).text())).append(" |\n");
            }
            sb.append("| as destination |");
            names.forEach(dst -> sb.append(' ').append(Fmt.markdown(totalCell(view, dst, false).text())).append(" |"));
            sb.append("  |\n");
        }
        List<MeshResult.Pair> unmeasured = mesh.pairs().stream().filter(p -> !p.measured()).toList();
        if (!unmeasured.isEmpty()) {
            sb.append("\n## Pairs without measurements\n\n");
            for (MeshResult.Pair p : unmeasured) {
                sb.append("- ").append(Fmt.markdown(p.source())).append(" -> ").append(Fmt.markdown(p.target()))
                    .append(": ").append(Fmt.markdown(p.status()))
                    .append(p.error() == null ? "" : ": " + Fmt.markdown(p.error())).append('\n');
            }
        }
        return sb.toString();
    }

    /** One row per pair and step (a pair without steps: one row with its status and error). */
    public String csv() {
        StringBuilder sb = new StringBuilder(
            "source,target,round,status,transport,level,sent,lost,lossPercent,p99DelayMs,error\n");
        for (MeshResult.Pair p : mesh.pairs()) {
            List<StepResult> steps = p.result() == null ? List.of() : p.result().steps();
            if (steps.isEmpty()) {
                sb.append(String.join(",", Fmt.csv(p.source()), Fmt.csv(p.target()), "" + p.round(), p.status(),
                    "", "", "", "", "", "", Fmt.csv(p.error() == null ? "" : p.error()))).append('\n');
            }
            for (StepResult s : steps) {
                StepMetrics m = StepMetrics.of(p.result(), s);
                sb.append(String.join(",", Fmt.csv(p.source()), Fmt.csv(p.target()), "" + p.round(), p.status(),
                    Fmt.csv(m.transport()), Fmt.csv(m.level()), "" + m.sent(), "" + m.lost(),
                    Fmt.num(m.lossPercent(), 4),
                    Fmt.num(m.p99DelayMs(), 3), Fmt.csv(p.error() == null ? "" : p.error()))).append('\n');
            }
        }
        return sb.toString();
    }

    private List<String[]> rows() {
        List<String[]> rows = new ArrayList<>();
        for (MeshResult.Pair p : mesh.pairs()) {
            List<StepResult> steps = p.result() == null ? List.of() : p.result().steps();
            String note = p.error() == null ? "" : p.error();
            if (steps.isEmpty()) {
                rows.add(new String[] {p.source(), p.target(), "" + p.round(), p.status(), "", "", "", "", "", note});
            }
            for (StepResult s : steps) {
                StepMetrics m = StepMetrics.of(p.result(), s);
                rows.add(new String[] {p.source(), p.target(), "" + p.round(), p.status(),
                    m.transport() + " " + m.level(), String.format(Locale.ROOT, "%,d", m.sent()),
                    String.format(Locale.ROOT, "%,d", m.lost()), Fmt.num(m.lossPercent(), 3),
                    Fmt.delayMs(m.p99DelayMs(), 3), note});
            }
        }
        return rows;
    }

    private String summary() {
        Map<String, Integer> byStatus = new LinkedHashMap<>();
        mesh.pairs().forEach(p -> byStatus.merge(p.status(), 1, Integer::sum));
        StringBuilder s = new StringBuilder();
        s.append(mesh.hosts().size()).append(" hosts, pairs: ").append(mesh.selection()).append(", ")
            .append(mesh.pairs().size()).append(" pairs (");
        s.append(String.join(", ", byStatus.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).toList()));
        s.append(")");
        if (mesh.schedule() != null) {
            s.append(" in ").append(mesh.schedule().rounds()).append(" rounds");
        }
        s.append("; started ").append(mesh.startedAt()).append(", finished ").append(mesh.finishedAt()).append('.');
        mesh.pairs().stream().filter(MeshResult.Pair::measured).findFirst().map(p -> p.result().plan())
            .ifPresent(plan -> s.append(String.format(Locale.ROOT, " Plan: %s, %d ports, levels %s, %.1fs per step.",
                String.join(",", plan.transports()), plan.ports(),
                String.join(",", plan.levels().stream().map(Object::toString).toList()), plan.durationNs() / 1e9)));
        return s.toString();
    }
}
