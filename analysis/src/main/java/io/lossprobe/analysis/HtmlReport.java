package io.lossprobe.analysis;

import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One self-contained HTML page over one or more result files: charts of the newest run (inline SVG, no scripts,
 * no network), its per-port heatmaps, the summary table, and with several runs the trend over time and a table of
 * every run. See docs/report.md.
 */
public final class HtmlReport {
    private static final String STYLE = """
        body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}
        h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
        table.summary{border-collapse:collapse;font-size:13px;margin:8px 0}
        table.summary th,table.summary td{border:1px solid #ccc;padding:3px 6px}
        table.summary th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}
        tr.lossy td{background:#fde0dd}
        figure.chart{margin:12px 0}figure.chart svg{max-width:100%;height:auto}
        .meta{font-size:13px;color:#555}.warn{color:#a50f15}
        """;

    private HtmlReport() {
    }

    /** Renders the page; {@code progress} hears what is being drawn (for long reports). */
    public static String render(List<LoadedResult> results, Consumer<String> progress) {
        if (results.isEmpty()) {
            throw new IllegalArgumentException("no result files");
        }
        LoadedResult latest = results.get(results.size() - 1);
        RunResult run = latest.run();
        List<StepMetrics> metrics = new ArrayList<>();
        Map<String, List<StepResult>> byTransport = new LinkedHashMap<>();
        for (StepResult s : run.steps()) {
            metrics.add(StepMetrics.of(s));
            byTransport.computeIfAbsent(s.transport(), k -> new ArrayList<>()).add(s);
        }
        ReportCharts charts = new ReportCharts();
        StringBuilder sb = new StringBuilder(256 * 1024);
        sb.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>lossprobe report</title>\n")
            .append("<style>").append(STYLE).append("</style></head><body>\n")
            .append("<h1>lossprobe report</h1>\n");
        sb.append("<p class=\"meta\">").append(results.size()).append(results.size() == 1 ? " run" : " runs")
            .append(". Newest: <code>").append(Fmt.html(latest.file().toString())).append("</code>, started ")
            .append(Fmt.html(String.valueOf(run.startedAt()))).append(", status ")
            .append(Fmt.html(String.valueOf(run.status()))).append(".");
        if (run.environment() != null) {
            var env = run.environment();
            sb.append(" Host ").append(Fmt.html(String.valueOf(env.host()))).append(", kernel ")
                .append(Fmt.html(String.valueOf(env.kernel()))).append(", ").append(env.cores()).append(" cores, ")
                .append(Fmt.html(String.valueOf(env.jvm()))).append(", lossprobe ")
                .append(Fmt.html(String.valueOf(env.lossprobeVersion()))).append('.');
        }
        if (run.plan() != null) {
            var p = run.plan();
            sb.append(" Plan: ").append(p.ports()).append(" ports from ").append(p.basePort()).append(", ")
                .append(p.durationNs() / 1_000_000).append(" ms per step, ").append(p.messageSize())
                .append("-byte messages, levels ").append(Fmt.html(p.levels().toString())).append('.');
        }
        sb.append("</p>\n");

        sb.append("<h2 id=\"summary\">Summary (newest run)</h2>\n");
        sb.append(SummaryTable.of(List.of(latest)).html(false));
        sb.append("<p class=\"meta\">Achieved TPS = messages received per second over the measured window. "
            + "CPU % = this process, in % of one core. NIC columns: the busiest interface in the step (most bytes), "
            + "counters over window and drain divided by the window.</p>\n");
        List<String> warnings = new ArrayList<>();
        for (StepResult s : run.steps()) {
            for (String w : s.warnings()) {
                warnings.add(s.transport() + " " + s.level() + ": " + w);
            }
        }
        if (!warnings.isEmpty()) {
            sb.append("<ul class=\"warn\">");
            warnings.forEach(w -> sb.append("<li>").append(Fmt.html(w)).append("</li>"));
            sb.append("</ul>\n");
        }

        progress.accept("drawing charts of the newest run");
        sb.append("<h2 id=\"charts\">Charts (newest run)</h2>\n");
        figure(sb, "chart-loss", charts.lossVsRate(metrics));
        figure(sb, "chart-achieved", charts.achievedVsRate(metrics));
        figure(sb, "chart-retransmits", charts.retransmitsVsRate(metrics));
        figure(sb, "chart-delay", charts.delayVsRate(metrics));
        List<StepResult> echoSteps = new ArrayList<>();
        for (LoadedResult r : results) {
            for (StepResult s : r.run().steps()) {
                if (s.echo() != null) {
                    echoSteps.add(s);
                }
            }
        }
        if (!echoSteps.isEmpty()) {
            figure(sb, "chart-rtt", charts.rttVsTps(echoSteps));
        }

        sb.append("<h2 id=\"heatmaps\">Loss by port and level (newest run)</h2>\n");
        for (Map.Entry<String, List<StepResult>> e : byTransport.entrySet()) {
            figure(sb, "heatmap-" + e.getKey(), charts.heatmap(e.getKey(), e.getValue()));
        }

        if (results.size() > 1) {
            progress.accept("drawing trends over " + results.size() + " runs");
            sb.append("<h2 id=\"trend\">Trend over ").append(results.size()).append(" runs</h2>\n");
            figure(sb, "trend-loss", charts.trend("Loss % over time", "loss % of sent", results,
                StepMetrics::lossPercent, true));
            figure(sb, "trend-achieved", charts.trend("Achieved rate over time", "achieved % of offered", results,
                m -> m.offeredRate() > 0 ? 100.0 * m.achievedRate() / m.offeredRate() : Double.NaN, false));
            figure(sb, "trend-p99", charts.trend("p99 delay over time", "p99 one-way delay (ms)", results,
                StepMetrics::p99DelayMs, false));
            sb.append("<h2 id=\"runs\">Every run</h2>\n");
            sb.append(SummaryTable.of(results).html(true));
        }
        sb.append("</body></html>\n");
        return sb.toString();
    }

    private static void figure(StringBuilder sb, String id, String svg) {
        sb.append("<figure class=\"chart\" id=\"").append(id).append("\">\n").append(svg).append("\n</figure>\n");
    }
}
