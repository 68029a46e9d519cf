package io.lossprobe.analysis;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.result.ResultFiles;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code lossprobe compare A B} in four formats: text that fits 100 columns, Markdown, JSON and a self-contained
 * HTML page with A's and B's loss curves and delay bands overlaid (and, when both runs had a {@code --probe} flow,
 * the probe's round trip p99 per step, drawn under load). Every format leads with a loud warning when
 * the plans differ ({@link PlanDiff}) and ends with the verdict.
 */
public final class ComparisonReport {
    /** The widest line {@link #text()} writes. */
    public static final int TEXT_WIDTH = 100;
    private static final String ROW = "%-6s %-6s %7s %7s %8s %7s %7s %7s %7s %7s %7s  %s";
    private final LoadedResult a;
    private final LoadedResult b;
    private final Comparison comparison;
    private final PlanDiff diff;

    public ComparisonReport(LoadedResult a, LoadedResult b, Comparison.Tolerance tolerance) {
        this.a = a;
        this.b = b;
        this.comparison = Comparison.of(a, b, tolerance);
        this.diff = PlanDiff.of(a.run(), b.run());
    }

    public Comparison comparison() {
        return comparison;
    }

    public PlanDiff diff() {
        return diff;
    }

    /** The verdict in one line. */
    public String verdict() {
        List<String> regressed = comparison.rows().stream().filter(Comparison.Row::regressed)
            .map(r -> r.transport() + " " + r.level()).toList();
        long both = comparison.rows().stream().filter(r -> r.a() != null && r.b() != null).count();
        String v = regressed.isEmpty() ? "no regressions in " + both + " step(s) present in both runs"
            : regressed.size() + " of " + both + " step(s) regressed: " + String.join(", ", regressed);
        return diff.plansDiffer() ? v + " (plans differ: see the warning)" : v;
    }

    // ---- text

    /** Plain text for a terminal, no line longer than {@link #TEXT_WIDTH}. */
    public String text() {
        List<String> out = new ArrayList<>();
        out.add("A: " + describe(a));
        out.add("B: " + describe(b));
        if (diff.plansDiffer()) {
            out.add("!! WARNING: the plans differ; the deltas measure the difference as much as the network:");
            diff.plan().forEach(d -> out.add("!!   " + d));
        }
        diff.environment().forEach(d -> out.add("note: " + d));
        out.add("");
        out.add(String.format(Locale.ROOT, ROW, "proto", "level", "loss%A", "loss%B", "delta", "recv/sA",
            "recv/sB", "delta", "p99ms A", "p99ms B", "delta", "verdict"));
        for (Comparison.Row r : comparison.rows()) {
            StepMetrics ma = r.a();
            StepMetrics mb = r.b();
            out.add(String.format(Locale.ROOT, ROW, cut(r.transport(), 6), cut(r.level(), 6),
                ma == null ? "-" : Fmt.num(ma.lossPercent(), 4), mb == null ? "-" : Fmt.num(mb.lossPercent(), 4),
                ma == null || mb == null ? "" : signed(mb.lossPercent() - ma.lossPercent(), 4),
                ma == null ? "-" : ReportCharts.RateFormat.compact(ma.achievedRate()),
                mb == null ? "-" : ReportCharts.RateFormat.compact(mb.achievedRate()),
                ma == null || mb == null ? "" : percent(pct(ma.achievedRate(), mb.achievedRate())),
                ma == null ? "-" : Fmt.delayMs(ma.p99DelayMs(), 3), mb == null ? "-" : Fmt.delayMs(mb.p99DelayMs(), 3),
                ma == null || mb == null ? "" : percent(pct(ma.p99DelayMs(), mb.p99DelayMs())), rowVerdict(r))
                .stripTrailing());
        }
        if (probes()) {
            out.add("");
            out.add("probe round trip p99 in ms (run --probe), A -> B:");
            for (Comparison.Row r : comparison.rows()) {
                out.add(String.format(Locale.ROOT, "%-6s %-6s %9s -> %-9s %s", cut(r.transport(), 6),
                    cut(r.level(), 6), probeP99(r.a()), probeP99(r.b()), probeDelta(r)).stripTrailing());
            }
        }
        List<Comparison.Row> regressed = comparison.rows().stream().filter(Comparison.Row::regressed).toList();
        if (!regressed.isEmpty()) {
            out.add("");
            for (Comparison.Row r : regressed) {
                for (Comparison.Regression g : r.regressions()) {
                    out.addAll(wrap(r.transport() + " " + r.level() + ": " + g.detail(), "    "));
                }
            }
        }
        out.add("");
        out.addAll(wrap("verdict: " + verdict(), "  "));
        List<String> fitted = new ArrayList<>();
        // A terminal obeys control characters: none from a result file reaches it.
        out.forEach(l -> fitted.addAll(wrap(l.replaceAll("\\p{Cntrl}", "?"), "    ")));
        return String.join("\n", fitted) + "\n";
    }

    private static String describe(LoadedResult r) {
        RunLabels l = RunLabels.of(r.run());
        String host = r.run().environment() == null ? "?" : r.run().environment().host();
        String started = String.valueOf(r.run().startedAt()).replaceFirst("\\.\\d+Z$", "Z");
        return r.file() + " (started " + started + ", " + host
            + (RunLabels.LOCAL.equals(l.target()) ? ", one host" : " -> " + l.target()) + ", " + l.mode()
            + (r.run().plan() == null ? "" : ", " + r.run().plan().ports() + " ports, " + r.run().plan().messageSize()
            + " bytes, " + ChartParts.plain(r.run().plan().durationNs() / 1e9) + "s") + ", status "
            + r.run().status() + ")";
    }

    private static String rowVerdict(Comparison.Row r) {
        return r.a() == null ? "only in B" : r.b() == null ? "only in A" : r.regressed() ? "REGRESSION" : "ok";
    }

    /**
     * Whether both runs had a {@code --probe} flow beside their steps: only then do the formats show the probe's
     * round trip p99 per step side by side.
     */
    public boolean probes() {
        return StepMetrics.all(a.run()).stream().anyMatch(StepMetrics::probe)
            && StepMetrics.all(b.run()).stream().anyMatch(StepMetrics::probe);
    }

    /** The probe's round trip p99 in ms, "-" where the step is missing or its probe measured none. */
    private static String probeP99(StepMetrics m) {
        return m == null ? "-" : Fmt.delayMs(m.probeRttMs()[2], 3);
    }

    private static String probeDelta(Comparison.Row r) {
        return r.a() == null || r.b() == null ? "" : percent(pct(r.a().probeRttMs()[2], r.b().probeRttMs()[2]));
    }

    /** Breaks {@code line} at spaces into lines of at most {@link #TEXT_WIDTH}, continuing with {@code indent}. */
    static List<String> wrap(String line, String indent) {
        List<String> out = new ArrayList<>();
        String rest = line;
        while (rest.length() > TEXT_WIDTH) {
            int cut = rest.lastIndexOf(' ', TEXT_WIDTH);
            if (cut <= indent.length()) {
                cut = TEXT_WIDTH;
            }
            out.add(rest.substring(0, cut).stripTrailing());
            rest = indent + rest.substring(cut).strip();
        }
        out.add(rest);
        return out;
    }

    private static String cut(String s, int width) {
        return s.length() <= width ? s : s.substring(0, width - 1) + "~";
    }

    // ---- Markdown

    public String markdown() {
        StringBuilder sb = new StringBuilder("# lossprobe compare\n\n");
        sb.append("- **A**: `").append(md(describe(a))).append("`\n- **B**: `").append(md(describe(b)))
            .append("`\n\n");
        if (diff.plansDiffer()) {
            sb.append("> **Warning: the plans differ**; the deltas measure the difference as much as the network:\n");
            diff.plan().forEach(d -> sb.append(">\n> - ").append(md(d)).append('\n'));
            sb.append('\n');
        }
        diff.environment().forEach(d -> sb.append("Note: ").append(md(d)).append("  \n"));
        sb.append("\n| transport | level | loss % A | loss % B | delta (points) | recv/s A | recv/s B | delta % "
            + "| p99 ms A | p99 ms B | delta % | verdict |\n"
            + "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Comparison.Row r : comparison.rows()) {
            StepMetrics ma = r.a();
            StepMetrics mb = r.b();
            sb.append("| ").append(md(r.transport())).append(" | ").append(md(r.level())).append(" | ")
                .append(ma == null ? "-" : Fmt.num(ma.lossPercent(), 4)).append(" | ")
                .append(mb == null ? "-" : Fmt.num(mb.lossPercent(), 4)).append(" | ")
                .append(ma == null || mb == null ? "" : signed(mb.lossPercent() - ma.lossPercent(), 4)).append(" | ")
                .append(ma == null ? "-" : Fmt.num(ma.achievedRate(), 0)).append(" | ")
                .append(mb == null ? "-" : Fmt.num(mb.achievedRate(), 0)).append(" | ")
                .append(ma == null || mb == null ? "" : percent(pct(ma.achievedRate(), mb.achievedRate())))
                .append(" | ").append(ma == null ? "-" : Fmt.delayMs(ma.p99DelayMs(), 3)).append(" | ")
                .append(mb == null ? "-" : Fmt.delayMs(mb.p99DelayMs(), 3)).append(" | ")
                .append(ma == null || mb == null ? "" : percent(pct(ma.p99DelayMs(), mb.p99DelayMs()))).append(" | ")
                .append(r.regressed() ? "**REGRESSION**: " + md(String.join("; ", r.regressions().stream()
                    .map(Comparison.Regression::detail).toList())) : rowVerdict(r)).append(" |\n");
        }
        if (probes()) {
            sb.append("\nRound trip under load (the `--probe` echo flow beside each step):\n\n"
                + "| transport | level | probe p99 ms A | probe p99 ms B | delta % |\n|---|---|---:|---:|---:|\n");
            for (Comparison.Row r : comparison.rows()) {
                sb.append("| ").append(md(r.transport())).append(" | ").append(md(r.level())).append(" | ")
                    .append(probeP99(r.a())).append(" | ").append(probeP99(r.b())).append(" | ")
                    .append(probeDelta(r)).append(" |\n");
            }
        }
        sb.append("\n**Verdict**: ").append(md(verdict())).append('\n');
        return sb.toString();
    }

    private static String md(String s) {
        return s.replace("|", "\\|").replace("`", "'").replace("<", "&lt;").replace(">", "&gt;");
    }

    // ---- JSON

    public String json() {
        ObjectNode root = ResultFiles.mapper().createObjectNode();
        root.set("a", run(a));
        root.set("b", run(b));
        root.put("plansDiffer", diff.plansDiffer());
        ArrayNode pd = root.putArray("planDifferences");
        diff.plan().forEach(pd::add);
        ArrayNode ed = root.putArray("environmentDifferences");
        diff.environment().forEach(ed::add);
        ArrayNode rows = root.putArray("rows");
        for (Comparison.Row r : comparison.rows()) {
            ObjectNode row = rows.addObject();
            row.put("transport", r.transport()).put("level", r.level()).put("verdict", rowVerdict(r));
            if (r.a() != null) {
                row.set("a", metrics(r.a()));
            }
            if (r.b() != null) {
                row.set("b", metrics(r.b()));
            }
            if (r.a() != null && r.b() != null) {
                ObjectNode d = row.putObject("delta");
                num(d, "lossPercentPoints", r.b().lossPercent() - r.a().lossPercent());
                num(d, "achievedRatePercent", pct(r.a().achievedRate(), r.b().achievedRate()));
                num(d, "p99DelayPercent", pct(r.a().p99DelayMs(), r.b().p99DelayMs()));
                if (r.a().probe() && r.b().probe()) {
                    num(d, "probeRttP99Percent", pct(r.a().probeRttMs()[2], r.b().probeRttMs()[2]));
                }
            }
            ArrayNode regs = row.putArray("regressions");
            r.regressions().forEach(g -> regs.addObject().put("metric", g.metric()).put("detail", g.detail()));
        }
        root.put("regressed", comparison.rows().stream().filter(Comparison.Row::regressed).count());
        root.put("verdict", verdict());
        try {
            return ResultFiles.mapper().writeValueAsString(root) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectNode run(LoadedResult r) {
        ObjectNode n = ResultFiles.mapper().createObjectNode();
        RunLabels l = RunLabels.of(r.run());
        n.put("file", r.file().toString()).put("startedAt", r.run().startedAt())
            .put("status", r.run().status() == null ? null : r.run().status().json())
            .put("target", l.target()).put("direction", l.direction()).put("mode", l.mode())
            .put("sizeBytes", l.sizeBytes());
        if (r.run().environment() != null) {
            n.put("host", r.run().environment().host());
        }
        if (r.run().plan() != null) {
            n.put("ports", r.run().plan().ports()).put("durationNs", r.run().plan().durationNs());
        }
        return n;
    }

    private static ObjectNode metrics(StepMetrics m) {
        ObjectNode n = ResultFiles.mapper().createObjectNode();
        num(n, "lossPercent", m.lossPercent());
        num(n, "achievedRate", m.achievedRate());
        num(n, "p50DelayMs", m.p50DelayMs());
        num(n, "p99DelayMs", m.p99DelayMs());
        n.put("sent", m.sent()).put("lost", m.lost());
        if (m.probe()) {
            num(n, "probeRttP50Ms", m.probeRttMs()[0]);
            num(n, "probeRttP99Ms", m.probeRttMs()[2]);
            num(n, "probeLost", m.probeLost());
        }
        return n;
    }

    private static void num(ObjectNode n, String key, double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            n.putNull(key);
        } else {
            n.put(key, v);
        }
    }

    // ---- HTML

    /** A self-contained page: the warning, overlaid loss curves and delay bands, the table, the verdict. */
    public String html() {
        Palette palette = new Palette();
        HistoryCharts charts = new HistoryCharts(palette);
        List<StepMetrics> ma = StepMetrics.all(a.run());
        List<StepMetrics> mb = StepMetrics.all(b.run());
        StringBuilder sb = new StringBuilder(128 * 1024);
        sb.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
            .append("<title>lossprobe compare</title>\n")
            .append("<style>").append(HtmlReport.STYLE).append("</style></head><body>\n<h1>lossprobe compare</h1>\n")
            .append("<p class=\"meta\"><b>A</b>: ").append(Fmt.html(describe(a))).append("<br><b>B</b>: ")
            .append(Fmt.html(describe(b))).append("</p>\n");
        if (diff.plansDiffer()) {
            sb.append("<div class=\"banner\" id=\"plan-warning\"><b>Warning: the plans differ</b>; the deltas "
                + "measure the difference as much as the network.<ul>");
            diff.plan().forEach(d -> sb.append("<li>").append(Fmt.html(d)).append("</li>"));
            sb.append("</ul></div>\n");
        }
        if (!diff.environment().isEmpty()) {
            sb.append("<p class=\"meta\">Environment: ");
            sb.append(Fmt.html(String.join("; ", diff.environment()))).append(".</p>\n");
        }
        sb.append("<h2 id=\"verdict\">Verdict</h2>\n<p class=\"verdict ")
            .append(comparison.anyRegression() ? "failed" : "pass").append("\">").append(Fmt.html(verdict()))
            .append("</p>\n");
        if (!ma.isEmpty() || !mb.isEmpty()) {
            figure(sb, charts.compareLoss("compare-loss", ma, mb));
            sb.append("<h2 id=\"delay\">Delay, A and B</h2>\n<div class=\"grid\">\n");
            DelayCharts delays = new DelayCharts(palette);
            charts.compareDelay("compare-delay-", ma, mb, delays).forEach(f -> figure(sb, f));
            sb.append("</div>\n");
            if (probes()) {
                sb.append("<h2 id=\"probe\">Round trip under load, A and B</h2>\n");
                figure(sb, charts.compareProbe("compare-probe", ma, mb, new ProbeCharts(palette, delays)));
            }
        }
        sb.append("<h2 id=\"table\">Step by step</h2>\n<table class=\"summary\">\n<thead><tr><th>transport</th>"
            + "<th>level</th><th>loss % A</th><th>loss % B</th><th>delta (points)</th><th>recv/s A</th>"
            + "<th>recv/s B</th><th>delta %</th><th>p99 ms A</th><th>p99 ms B</th><th>delta %</th>"
            + (probes() ? "<th>probe p99 ms A</th><th>probe p99 ms B</th><th>delta %</th>" : "") + "<th>verdict</th>"
            + "</tr></thead>\n<tbody>\n");
        for (Comparison.Row r : comparison.rows()) {
            StepMetrics x = r.a();
            StepMetrics y = r.b();
            sb.append(r.regressed() ? "<tr class=\"lossy\">" : "<tr>");
            cell(sb, r.transport(), false);
            cell(sb, r.level(), false);
            cell(sb, x == null ? "-" : Fmt.num(x.lossPercent(), 4), true);
            cell(sb, y == null ? "-" : Fmt.num(y.lossPercent(), 4), true);
            cell(sb, x == null || y == null ? "" : signed(y.lossPercent() - x.lossPercent(), 4), true);
            cell(sb, x == null ? "-" : Fmt.num(x.achievedRate(), 0), true);
            cell(sb, y == null ? "-" : Fmt.num(y.achievedRate(), 0), true);
            cell(sb, x == null || y == null ? "" : percent(pct(x.achievedRate(), y.achievedRate())), true);
            cell(sb, x == null ? "-" : Fmt.delayMs(x.p99DelayMs(), 3), true);
            cell(sb, y == null ? "-" : Fmt.delayMs(y.p99DelayMs(), 3), true);
            cell(sb, x == null || y == null ? "" : percent(pct(x.p99DelayMs(), y.p99DelayMs())), true);
            if (probes()) {
                cell(sb, probeP99(x), true);
                cell(sb, probeP99(y), true);
                cell(sb, probeDelta(r), true);
            }
            cell(sb, r.regressed() ? "REGRESSION: " + String.join("; ", r.regressions().stream()
                .map(Comparison.Regression::detail).toList()) : rowVerdict(r), false);
            sb.append("</tr>\n");
        }
        sb.append("</tbody>\n</table>\n</body></html>\n");
        return sb.toString();
    }

    private static void figure(StringBuilder sb, ChartParts.Figure f) {
        sb.append(ChartSvg.figure(f, f.id()));
    }

    private static void cell(StringBuilder sb, String text, boolean numeric) {
        sb.append(numeric ? "<td class=\"n\">" : "<td>").append(Fmt.html(text)).append("</td>");
    }

    private static double pct(double a, double b) {
        return a == 0 || Double.isNaN(a) || Double.isNaN(b) ? Double.NaN : 100.0 * (b - a) / a;
    }

    private static String percent(double v) {
        String s = signed(v, 1);
        return s.isEmpty() ? "" : s + "%";
    }

    private static String signed(double v, int decimals) {
        String s = Fmt.num(v, decimals);
        return s.isEmpty() || v < 0 ? s : "+" + s;
    }
}
