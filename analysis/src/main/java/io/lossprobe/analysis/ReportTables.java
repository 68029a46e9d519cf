package io.lossprobe.analysis;

import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Environment;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** The report's plain tables: the loss attribution with each step's warnings, and the plan and environment. */
final class ReportTables {
    private ReportTables() {
    }

    /** Per step: where the lost messages went, the sockets' drops, and the step's warnings. */
    static void attribution(StringBuilder sb, RunResult run, boolean sized) {
        sb.append("<h2 id=\"attribution\">Where the loss happened, and warnings</h2>\n");
        Set<String> keys = new LinkedHashSet<>();
        run.steps().forEach(s -> keys.addAll(s.attribution().keySet()));
        keys.remove("lost");
        sb.append("<table class=\"summary\">\n<thead><tr><th>transport</th><th>level</th><th>lost</th>");
        keys.forEach(k -> sb.append("<th>").append(Fmt.html(k)).append("</th>"));
        sb.append("<th>k-drops</th><th>warnings</th></tr></thead>\n<tbody>\n");
        for (StepResult s : run.steps()) {
            sb.append(s.counts().lost() > 0 ? "<tr class=\"lossy\">" : "<tr>").append("<td>")
                .append(Fmt.html(s.transport())).append("</td><td>").append(Fmt.html(Comparison.label(s, sized)))
                .append("</td><td class=\"n\">").append(String.format(Locale.ROOT, "%,d",
                    s.counts().lost())).append("</td>");
            for (String k : keys) {
                Long v = s.attribution().get(k);
                sb.append("<td class=\"n\">").append(v == null ? "" : String.format(Locale.ROOT,
                    "%,d", v)).append("</td>");
            }
            sb.append("<td class=\"n\">").append(s.socketDrops() == null ? "-" : String.format(
                Locale.ROOT, "%,d", s.socketDrops())).append("</td><td>");
            if (!s.warnings().isEmpty()) {
                sb.append("<ul class=\"warn\">");
                s.warnings().forEach(w -> sb.append("<li>").append(Fmt.html(w)).append("</li>"));
                sb.append("</ul>");
            }
            sb.append("</td></tr>\n");
        }
        sb.append("</tbody>\n</table>\n<p class=\"meta\">Attribution splits <i>lost</i> by what the counters "
            + "tell: the receiving sockets' own drops, the NIC, the sending host's egress, and the rest (path or "
            + "unknown); sendRefused counts sends the transport refused (not lost). See docs/measurement.md."
            + "</p>\n");
    }

    /** The plan, the options in effect and the environment the run recorded. */
    static void plan(StringBuilder sb, RunResult run) {
        sb.append("<h2 id=\"plan\">Plan, options and environment</h2>\n<dl class=\"plan\">\n");
        Plan p = run.plan();
        if (p != null) {
            dt(sb, "transports", String.join(", ", p.transports()));
            dt(sb, "ports", p.ports() + " from " + p.basePort());
            dt(sb, "levels", String.join(", ", p.levels().stream().map(Object::toString).toList()));
            dt(sb, "window / warm-up / drain", ms(p.durationNs()) + " / " + ms(p.warmupNs()) + " / "
                + ms(p.drainNs()));
            dt(sb, "message size", p.messageSize() + " bytes (header included)");
            String multicast = RunLabels.multicastTarget(run);
            if (multicast != null) {
                dt(sb, RunLabels.multicastKind(run).equals("multicast") ? "multicast group -> receivers"
                    : "multi-destination-cast sender -> receivers", multicast.replace(",", ", "));
            } else {
                dt(sb, "receivers' address", String.valueOf(p.bindAddress()));
            }
            dt(sb, "mode", p.mode() + (Plan.ECHO.equals(p.mode()) ? ", concurrency " + p.concurrency()
                + (p.concurrency() == 0 ? " (open loop)" : " (closed loop)") : ""));
            dt(sb, "send pattern", p.pattern() + (p.sendPattern().random() ? " (seed " + p.seed() + ")" : ""));
            dt(sb, "options in effect (-X and flags)", p.transportOptions().isEmpty() ? "none recorded"
                : String.join(", ", p.transportOptions().entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue()).toList()));
        }
        Environment env = run.environment();
        if (env != null) {
            dt(sb, "host", env.host() + " (" + env.os() + " " + env.kernel() + ", " + env.cores() + " cores)");
            dt(sb, "JVM, lossprobe", env.jvm() + ", " + env.lossprobeVersion());
            dt(sb, "socket buffers", join(env.socketBuffers()));
            dt(sb, "transport settings", join(env.transportSettings()));
        }
        dt(sb, "started, finished", run.startedAt() + ", " + run.finishedAt());
        sb.append("</dl>\n");
    }

    private static void dt(StringBuilder sb, String name, String value) {
        sb.append("<dt>").append(Fmt.html(name)).append("</dt><dd>").append(Fmt.html(String.valueOf(value)))
            .append("</dd>\n");
    }

    private static String join(Map<String, Long> map) {
        return map.isEmpty() ? "none recorded" : String.join(", ", map.entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue()).toList());
    }

    private static String ms(long ns) {
        return ChartParts.plain(ns / 1e6) + " ms";
    }
}
