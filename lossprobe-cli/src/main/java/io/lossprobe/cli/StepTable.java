package io.lossprobe.cli;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.StepResult;
import java.util.Locale;

/** The one-row-per-step table printed during a run. */
final class StepTable {
    private static final String FORMAT = "%-6s %8s %11s %11s %10s %8s %7s %7s %8s %6s %9s %9s  %s";

    private StepTable() {
    }

    static String header() {
        return String.format(Locale.ROOT, FORMAT, "proto", "target", "sent/s", "recv/s", "lost", "loss%", "dup",
            "reord", "k-drops", "cpu%", "p50", "p99", "flags");
    }

    static String row(StepResult r) {
        Counts c = r.counts();
        String flags = r.saturated() ? "saturated" : "";
        if (c.sendFailed() > 0) {
            flags += (flags.isEmpty() ? "" : ",") + "refused=" + c.sendFailed();
        }
        if (c.late() > 0) {
            flags += (flags.isEmpty() ? "" : ",") + "late=" + c.late();
        }
        if (c.corrupt() > 0) {
            flags += (flags.isEmpty() ? "" : ",") + "corrupt=" + c.corrupt();
        }
        return String.format(Locale.ROOT, FORMAT, r.transport(), r.level(), rate(r.achievedSendRate()),
            rate(r.achievedReceiveRate()), c.lost(), String.format(Locale.ROOT, "%.3f", r.lossPercent()),
            c.duplicates(), c.reordered(), r.socketDrops() == null ? "-" : r.socketDrops().toString(),
            String.format(Locale.ROOT, "%.0f", r.cpu().processPercent()), nanos(r.delay().p50Ns()),
            nanos(r.delay().p99Ns()), flags);
    }

    /** The request/response line under an echo step's row: TPS, round trip, loss by direction. */
    static String echoRow(StepResult r) {
        io.lossprobe.core.result.Echo e = r.echo();
        io.lossprobe.core.result.Latency rtt = e.rtt();
        return String.format(Locale.ROOT, "       echo: tps %s  rtt mean %s p50 %s p90 %s p99 %s p99.9 %s max %s  "
                + "lost requests %d, replies %d", rate(e.tps()), nanos((long) rtt.meanNs()), nanos(rtt.p50Ns()),
            nanos(rtt.p90Ns()), nanos(rtt.p99Ns()), nanos(rtt.p999Ns()), nanos(rtt.maxNs()), e.requestsLost(),
            e.repliesLost());
    }

    static String rate(double perSecond) {
        return String.format(Locale.ROOT, "%,.0f", perSecond);
    }

    /** 850ns, 12.3us, 4.56ms, 1.20s. */
    static String nanos(long ns) {
        if (ns < 1_000) {
            return ns + "ns";
        }
        if (ns < 1_000_000) {
            return String.format(Locale.ROOT, "%.1fus", ns / 1e3);
        }
        if (ns < 1_000_000_000) {
            return String.format(Locale.ROOT, "%.2fms", ns / 1e6);
        }
        return String.format(Locale.ROOT, "%.2fs", ns / 1e9);
    }
}
