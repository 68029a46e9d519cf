package io.lossprobe.cli;

import io.lossprobe.analysis.WireRate;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.plan.Units;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.SearchResult;
import io.lossprobe.core.result.SearchTrial;
import io.lossprobe.core.result.StepResult;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToLongFunction;

/** The one-row-per-step table printed during a run, and the lines of a rate search. */
final class StepTable {
    private static final String FORMAT =
        "%-9s %6s %8s %11s %11s %9s %9s %10s %8s %7s %7s %8s %6s %9s %9s  %s";

    private StepTable() {
    }

    static String header() {
        return String.format(Locale.ROOT, FORMAT, "proto", "size", "target", "sent/s", "recv/s", "Mb/s",
            "wire-Mb/s", "lost", "loss%", "dup", "reord", "k-drops", "cpu%", "p50", "p99", "flags");
    }

    /** A row of a step this build measured (it records its message size), on IPv4. */
    static String row(StepResult r) {
        return row(r, r.messageSize() == null ? io.lossprobe.core.wire.MessageHeader.LENGTH : r.messageSize(),
            false);
    }

    /**
     * @param planSize the plan's message size, for steps that do not record their own
     * @param ipv6     the receivers' address is IPv6 (40-byte IP headers on the wire)
     */
    static String row(StepResult r, int planSize, boolean ipv6) {
        Counts c = r.counts();
        String flags = r.saturated() ? "saturated" : "";
        if (r.senderLimit() != null && r.senderLimit().behind() > 0) {
            // Why the sender fell behind: starved, kernel-held, cpu-limit or behind-unexplained.
            flags += (flags.isEmpty() ? "" : ",") + r.senderLimit().reason().flag();
        }
        if (r.cpu() != null && r.cpu().hostPercent() >= io.lossprobe.analysis.StepMetrics.SATURATED_HOST_CPU_PERCENT) {
            // The host's cores near saturation: the instrument competed with the traffic for them.
            flags += (flags.isEmpty() ? "" : ",") + String.format(Locale.ROOT, "host-cpu=%.0f%%",
                r.cpu().hostPercent());
        }
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
        int size = r.messageSize() != null ? r.messageSize() : planSize;
        double received = r.achievedReceiveRate();
        double payloadBits = WireRate.payloadBits(received, size);
        double wireBits = WireRate.wireBits(r.transport(), received, size, ipv6);
        String sizeText = size + "B";
        if (r.sizes() != null) {
            // A size mix: each size's messages at their own rate, the column naming the mix's mean size.
            payloadBits = 0;
            wireBits = 0;
            double seconds = r.windowNs() / 1e9;
            for (io.lossprobe.core.result.SizeCounts sc : r.sizes()) {
                payloadBits += WireRate.payloadBits(sc.received() / seconds, sc.size());
                wireBits += WireRate.wireBits(r.transport(), sc.received() / seconds, sc.size(), ipv6);
            }
            sizeText = c.received() == 0 ? "mix" : "~" + Math.round(payloadBits / 8 / received) + "B";
        }
        return String.format(Locale.ROOT, FORMAT, proto(r), sizeText, r.level(), rate(r.achievedSendRate()),
            rate(received), WireRate.megabits(payloadBits),
            WireRate.megabits(wireBits), c.lost(),
            String.format(Locale.ROOT, "%.3f", r.lossPercent()), c.duplicates(), c.reordered(),
            r.socketDrops() == null ? "-" : r.socketDrops().toString(),
            String.format(Locale.ROOT, "%.0f", r.cpu().processPercent()), nanos(r.delay(), Latency::p50Ns),
            nanos(r.delay(), Latency::p99Ns), flags);
    }

    /** The transport, and in a run of both directions which one: {@code udp/fwd} (this host sent), {@code udp/rev}. */
    static String proto(StepResult r) {
        if (r.direction() == null) {
            return r.transport();
        }
        return r.transport() + (r.direction().equals(StepResult.FORWARD) ? "/fwd" : "/rev");
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

    /** A step's {@code --probe}: the echo flow's round trip under the step's load and what it lost. */
    static String probeRow(StepResult r) {
        io.lossprobe.core.result.ProbeResult p = r.probe();
        io.lossprobe.core.result.Echo e = p.echo();
        Latency rtt = e == null ? null : e.rtt();
        return String.format(Locale.ROOT, "      probe: echo %s/s on %d  rtt p50 %s p99 %s max %s  lost %s of %s%s",
            Units.formatRate(p.ratePerSecond()), p.port(), nanos(rtt, Latency::p50Ns), nanos(rtt, Latency::p99Ns),
            nanos(rtt, Latency::maxNs), e == null ? "-" : rate(e.roundTripLost()), e == null ? "-"
                : rate(e.requestsSent()), p.behind() > 0 ? ", " + rate(p.behind()) + " behind (its sender starved)"
                : "");
    }

    /**
     * A multicast step's receivers, one line each under the step's row (which shows the worst of them): what each
     * received and lost, its loss events, duplicates and socket drops, and with Aeron the NAKs its driver sent;
     * then the union over them.
     */
    static List<String> receiverRows(StepResult r) {
        List<String> out = new java.util.ArrayList<>();
        for (io.lossprobe.core.result.ReceiverResult rx : r.receivers()) {
            io.lossprobe.core.result.Counts c = rx.counts();
            out.add(String.format(Locale.ROOT, "   receiver %-15s received %s lost %d (%.3f%%) in %d loss events, "
                    + "dup %d, k-drops %s%s%s", rx.receiver(), rate(c.received()), c.lost(), rx.lossPercent(),
                c.lossEvents(), c.duplicates(), rx.socketDrops() == null ? "-" : rx.socketDrops(), naks(rx),
                (rx.receiver().equals(r.worstReceiver()) ? "  (worst: the row above)" : "")
                    + (rx.gone() == null ? "" : "  GONE " + rx.gone())));
        }
        if (r.union() != null) {
            out.add(unionRow(r.union()));
        }
        return out;
    }

    /**
     * The union over a multicast step's receivers: what every receiver got and what at least one got, and the loss
     * lost at every receiver (before the fan-out) apart from the loss at some of them only.
     */
    static String unionRow(io.lossprobe.core.result.ReceiverUnion u) {
        String head = String.format(Locale.ROOT, "   union of %d receivers  ", u.receivers());
        if (!u.exact()) {
            String why = u.flows().stream().filter(f -> !f.exact()).findFirst()
                .map(f -> "flow " + f.flow() + ": " + f.unknown()).orElse("");
            return head + "unknown (" + why + ")";
        }
        return head + String.format(Locale.ROOT, "every one got %s, at least one got %s; lost at all %d, at some "
                + "only %d, anywhere %d", rate(u.allReceived()), rate(u.anyReceived()), u.lostAtAll(), u.lostAtSome(),
            u.lostAnywhere());
    }

    /** Aeron: {@code ", naks N"}, the NAKs the receiver's driver sent for the run's streams; else nothing. */
    private static String naks(io.lossprobe.core.result.ReceiverResult rx) {
        long naks = 0;
        boolean any = false;
        for (io.lossprobe.core.result.FlowResult f : rx.flows()) {
            Long n = f.transport().get(AERON_NAKS_SENT);
            if (n != null) {
                naks += n;
                any = true;
            }
        }
        return any ? ", naks " + rate(naks) : "";
    }

    /** The per-flow counter of NAKs an Aeron receiver's driver sent (docs/aeron.md). */
    private static final String AERON_NAKS_SENT = "aeron.rcvNaksSent";

    /** A step's {@code --size-mix}: per size, what was sent, received and lost, and the payload rate. */
    static String sizesRow(StepResult r) {
        StringBuilder b = new StringBuilder("      sizes:");
        for (io.lossprobe.core.result.SizeCounts sc : r.sizes()) {
            b.append(String.format(Locale.ROOT, "  %dB sent %s lost %d (%.3f%%) %.1f Mb/s", sc.size(),
                rate(sc.sent()), sc.lost(), sc.lossPercent(), sc.receivedMbps()));
        }
        return b.toString();
    }

    /** One trial of a rate search: rate, window, what was lost, and each criterion's verdict. */
    static String trial(String transport, int size, SearchTrial t, Map<String, String> verdicts) {
        StringBuilder v = new StringBuilder();
        verdicts.forEach((criterion, verdict) -> v.append(v.length() == 0 ? "" : ", ").append(criterion).append(' ')
            .append(verdict));
        String offered = t.rate() == 0 ? "max (" + rate(t.achievedSendRate()) + "/s sent)" : rate(t.rate()) + "/s";
        return String.format(Locale.ROOT, "  %-5s %6s trial %2d %-5s %6s: %s lost %,d of %,d (%.4f%%)%s -> %s",
            transport, size + "B", t.trial(), t.phase(), nanos(t.windowNs()), offered, t.lost(), t.sent(),
            100 * t.lossRatio(), t.senderLimited() ? ", sender short by " + (t.behind() + t.sendFailed())
                + (t.senderLimit() == null ? "" : " (" + t.senderLimit().reason().words() + ")") : "", v);
    }

    /** A search's finding for one criterion, in one line. */
    static String finding(SearchResult s) {
        String name = s.criterion().toUpperCase(Locale.ROOT)
            + (s.maxLossRatio() > 0 ? " (loss <= " + percent(s.maxLossRatio()) + ")" : "");
        String bounds = "[" + (s.lowerBound() == null ? "-" : rate(s.lowerBound())) + " .. "
            + (s.upperBound() == null ? "-" : rate(s.upperBound())) + "]";
        String width = s.width() == null ? "" : String.format(Locale.ROOT, " width %s (goal %s)",
            percent(s.width()), percent(s.precision()));
        String answer = s.rate() == null ? "none" : rate(s.rate()) + "/s";
        return String.format(Locale.ROOT, "%-5s %6s %s %s %s%s, %d trials in %.1fs; %s", s.transport(),
            s.messageSize() + "B", name, answer, bounds, width, s.trials().size(), s.searchNs() / 1e9,
            boundedBy(s));
    }

    private static String boundedBy(SearchResult s) {
        return switch (s.boundedBy()) {
            case PATH -> "the path lost more above it";
            case SENDER -> "bounded by the SENDER, not the path: it could not carry "
                + (s.upperBound() == null ? "more" : rate(s.upperBound()) + "/s")
                + (s.senderLimit() == null ? "" : ", " + s.senderLimit().reason().words());
            case MAX -> "passed at --search-max: the path may carry more";
            case MIN -> "failed even at --search-min";
            case STOPPED -> "interrupted";
            case TRIALS -> "unfinished: the trial budget ran out";
        };
    }

    static String percent(double ratio) {
        return new java.math.BigDecimal(ratio * 100).round(new java.math.MathContext(3)).stripTrailingZeros()
            .toPlainString() + "%";
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
