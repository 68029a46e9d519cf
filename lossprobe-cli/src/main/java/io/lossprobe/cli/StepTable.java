package io.lossprobe.cli;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.StepResult;
import java.util.Locale;
import java.util.function.ToLongFunction;

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
        if (c.foreign() > 0) {
            flags += (flags.isEmpty() ? "" : ",") + "foreign=" + c.foreign();
        }
        if (r.delay().uncertaintyNs() != null) {
            // Between hosts: p50/p99 are one-way delays corrected by the estimated clock offset, true to this.
            flags += (flags.isEmpty() ? "" : ",") + "clock+-" + nanos(r.delay().uncertaintyNs());
        }
        return String.format(Locale.ROOT, FORMAT, r.transport(), r.level(), rate(r.achievedSendRate()),
            rate(r.achievedReceiveRate()), c.lost(), String.format(Locale.ROOT, "%.3f", r.lossPercent()),
            c.duplicates(), c.reordered(), r.socketDrops() == null ? "-" : r.socketDrops().toString(),
            String.format(Locale.ROOT, "%.0f", r.cpu().processPercent()), nanos(r.delay(), Latency::p50Ns),
            nanos(r.delay(), Latency::p99Ns), flags);
    }

    /** The request/response line under an echo step's row: TPS, round trip, loss by direction. */
    static String echoRow(StepResult r) {
        io.lossprobe.core.result.Echo e = r.echo();
        Latency rtt = e.rtt();
        return String.format(Locale.ROOT, "       echo: tps %s  rtt mean %s p50 %s p90 %s p99 %s p99.9 %s max %s  "
                + "lost requests %d, replies %d", rate(e.tps()), nanos(rtt, l -> (long) l.meanNs()),
            nanos(rtt, Latency::p50Ns), nanos(rtt, Latency::p90Ns), nanos(rtt, Latency::p99Ns),
            nanos(rtt, Latency::p999Ns), nanos(rtt, Latency::maxNs), e.requestsLost(), e.repliesLost());
    }

    /** One statistic of a distribution, or "-" when nothing was recorded: an empty histogram has no percentiles. */
    static String nanos(Latency latency, ToLongFunction<Latency> statistic) {
        return latency == null || latency.count() == 0 ? "-" : nanos(statistic.applyAsLong(latency));
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
