package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.pacing.FlowSendCounts;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.Echo;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.LossBurst;
import io.lossprobe.core.result.SignedHistogram;
import io.lossprobe.core.transport.TransportReport;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * A step's flow accounting: each flow's counts from what its sender sent and its receiver's tracker found, its
 * delays and (echo mode) its replies, and the step's sums over the flows. Built once per step, after the drain.
 */
final class FlowAccounting {
    final List<FlowResult> flows = new ArrayList<>();
    final IdentityChecks checks = new IdentityChecks();
    /** Each flow's delay over its own minimum, between hosts only (null on one host). */
    final DelayBaselines baselines;
    final List<LossBurst> bursts = new ArrayList<>();
    final Histogram ipdv = Latency.newHistogram();
    final SignedHistogram transit = new SignedHistogram();
    private final List<Echo> echoes = new ArrayList<>();
    Counts totals = Counts.ZERO;
    /** The receiving sockets' drops over the flows, null when the transport does not count them. */
    Long socketDrops;
    /** The same drops where a transport counts them in packets (UDP_GRO): what they explain is an estimate. */
    final PacketDrops packetDrops = new PacketDrops();
    long kernelStamped;
    long repliesStamped;
    private double jitterSum;
    private int jitterFlows;

    /**
     * @param timing  the timing mode that produced the delays ({@link io.lossprobe.core.transport.Timing})
     * @param replies echo mode: the replies' summaries per flow, else null
     */
    FlowAccounting(Plan plan, String timing, Clocks clocks, FlowSendCounts[] sendCounts,
                   TransportReport txReport, TransportReport rxReport, FlowReceiver.Summary[] summaries,
                   FlowReceiver.Summary[] replies, long windowNs) {
        baselines = clocks.offset() == null ? null : new DelayBaselines();
        for (int i = 0; i < summaries.length; i++) {
            FlowReceiver.Summary s = summaries[i];
            FlowSendCounts c = sendCounts[i];
            Map<String, Long> perFlow = new HashMap<>(txReport.flow(i));
            perFlow.putAll(rxReport.flow(i));
            // Foreign arrivals the transport refused before accounting (another source address, an extra
            // connection) join those the accounting refused (a tag that does not verify).
            Long foreignAtTransport = perFlow.remove(TransportReport.FOREIGN);
            Counts counts = new Counts(c.scheduled(), c.sent(), c.sendFailed(), c.behind(), s.received(),
                c.sent() - s.received(), s.lostInRuns(), s.duplicates(), s.reordered(), s.late(),
                s.lateDuplicates(), s.corrupt(), s.foreign() + (foreignAtTransport == null ? 0 : foreignAtTransport),
                s.lossEvents());
            checks.check(i, counts);
            Long drops = perFlow.remove(TransportReport.SOCKET_DROPS);
            Long perDrop = perFlow.remove(TransportReport.SOCKET_DROPS_MESSAGES_MAX);
            if (drops != null) {
                socketDrops = (socketDrops == null ? 0 : socketDrops) + drops;
                packetDrops.add(drops, perDrop, counts);
            }
            Echo flowEcho = null;
            if (replies != null) {
                FlowReceiver.Summary r = replies[i];
                flowEcho = echo(c.sent(), s.received(), r, windowNs,
                    Latency.of(r.delay(), null, null).measuredBy(r.timestampSource(), timing),
                    Latency.of(r.transit(), null, null).measuredBy(r.timestampSource(), timing));
                echoes.add(flowEcho);
                repliesStamped += r.kernelStamped();
                checks.checkReplies(i, c.sent(), r.received(), r.lostInRuns());
            }
            Long baseline = baselines == null ? null : baselines.add(s);
            String source = s.timestampSource();
            flows.add(new FlowResult(i, plan.port(i), counts, s.lossBurst(), drops,
                Latency.of(s.delay(), clocks.basis(), clocks.uncertaintyNs()).measuredBy(source, timing),
                Latency.of(s.transit(), clocks.basis(), clocks.uncertaintyNs()).measuredBy(source, timing), baseline,
                round(s.jitterNs()), Latency.of(s.ipdv()).measuredBy(source, timing), perFlow, flowEcho));
            kernelStamped += s.kernelStamped();
            totals = totals.plus(counts);
            bursts.add(s.lossBurst());
            ipdv.add(s.ipdv());
            transit.add(s.transit());
            if (s.received() >= 2) { // RFC 3550 jitter needs two arrivals; a silent flow has none to average
                jitterSum += s.jitterNs();
                jitterFlows++;
            }
        }
    }

    /** The mean of the flows' RFC 3550 jitter, over the flows with two arrivals or more. */
    double meanJitterNs() {
        return round(jitterSum / Math.max(1, jitterFlows));
    }

    /** Echo mode: the flows' request/response counts summed, with the step's round-trip figures. */
    Echo echoTotals(long windowNs, Latency rtt, Latency rttTransit) {
        long sent = 0;
        long requestsReceived = 0;
        long repliesReceived = 0;
        long dup = 0;
        long reordered = 0;
        long late = 0;
        for (Echo e : echoes) {
            sent += e.requestsSent();
            requestsReceived += e.requestsReceived();
            repliesReceived += e.repliesReceived();
            dup += e.duplicateReplies();
            reordered += e.reorderedReplies();
            late += e.lateReplies();
        }
        return new Echo(sent, requestsReceived, sent - requestsReceived, repliesReceived,
            requestsReceived - repliesReceived, sent - repliesReceived, dup, reordered, late,
            round(repliesReceived / (windowNs / 1e9)), rtt, rttTransit);
    }

    private static Echo echo(long sent, long requestsReceived, FlowReceiver.Summary replies, long windowNs,
                             Latency rtt, Latency rttTransit) {
        long repliesReceived = replies.received();
        return new Echo(sent, requestsReceived, sent - requestsReceived, repliesReceived,
            requestsReceived - repliesReceived, sent - repliesReceived, replies.duplicates(), replies.reordered(),
            replies.late(), round(repliesReceived / (windowNs / 1e9)), rtt, rttTransit);
    }

    /** One step-wide delay histogram from the flows' own. */
    static SignedHistogram merged(FlowReceiver.Summary[] flows) {
        SignedHistogram h = new SignedHistogram();
        for (FlowReceiver.Summary s : flows) {
            h.add(s.delay());
        }
        return h;
    }

    /** The flows' transits (echo: the replies' round trips from the actual send time) as one histogram. */
    static SignedHistogram mergedTransit(FlowReceiver.Summary[] flows) {
        SignedHistogram h = new SignedHistogram();
        for (FlowReceiver.Summary s : flows) {
            h.add(s.transit());
        }
        return h;
    }

    /** Figures in the results keep two decimals. */
    static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
