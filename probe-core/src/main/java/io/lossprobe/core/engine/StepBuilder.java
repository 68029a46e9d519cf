package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.counters.EgressQdisc;
import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.Echo;
import io.lossprobe.core.result.IntervalResult;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.LossBurst;
import io.lossprobe.core.result.SenderLimit;
import io.lossprobe.core.result.SignedHistogram;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Timing;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportReport;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds a step's result from its parts: the flows' accounting ({@link FlowAccounting}), the host's counter
 * deltas and where the losses went ({@link LossAttribution}), the intervals, and the warnings
 * ({@link StepWarnings}).
 */
final class StepBuilder {
    private final Transport transport;
    private final Map<String, String> options;
    /** The senders' egress queue, when they run on this host. */
    private final EgressQdisc egress;
    private final Map<String, Long> senderEnvironment;

    StepBuilder(Transport transport, Map<String, String> options, EgressQdisc egress,
                Map<String, Long> senderEnvironment) {
        this.transport = transport;
        this.options = options;
        this.egress = egress;
        this.senderEnvironment = senderEnvironment;
    }

    /**
     * @param delay  the flows' delays as one histogram
     * @param rtt    echo mode: the replies' round trips as one histogram, else null
     * @param after  the host's counters after the drain
     * @param egressQdiscDrops what the senders' egress queue dropped in the step (-1 unknown)
     */
    StepResult build(Plan plan, int step, Level level, SendSide.Outcome outcome, ReceiveSide.Receipt receipt,
                     FlowReceiver.Summary[] replies, SignedHistogram delay, SignedHistogram rtt,
                     WindowSample windowSample, HostCounters.Sample after, Clocks clocks, long egressQdiscDrops,
                     FailedRanges[] failures) {
        HostCounters.Sample before = windowSample.host();
        TransportReport txReport = outcome.report();
        TransportReport rxReport = receipt.report();
        // Which timing mode and timestamp source produced each delay figure (docs/measurement.md, the floor).
        String timing = Timing.modeOf(transport, options);
        FlowAccounting flows = new FlowAccounting(plan, timing, clocks, outcome.counts(), txReport, rxReport,
            receipt.flows(), replies, outcome.windowNs());
        Counts totals = flows.totals;
        double windowSeconds = outcome.windowNs() / 1e9;
        double achievedSend = totals.sent() / windowSeconds;
        double achievedReceive = totals.received() / windowSeconds;
        long target = level.ratePerSecond();
        boolean saturated = target > 0 && achievedSend < 0.99 * target;
        Map<String, Long> hostDeltas = after.deltaSince(before);
        SenderEgress senderEgress = SenderEgress.of(egress.device(), egressQdiscDrops, hostDeltas, senderEnvironment);
        if (egressQdiscDrops > 0) {
            hostDeltas.put(egress.counterKey(), egressQdiscDrops);
        }
        Map<String, Long> transportCounters = new HashMap<>(txReport.counters());
        transportCounters.putAll(rxReport.counters());

        StepWarnings warnings = new StepWarnings(txReport, rxReport, flows.checks);
        warnings.addAll(transport.stepWarnings(txReport, rxReport));
        warnings.counts(totals, failures, outcome.failedAfterClose(), windowSample);
        warnings.addAll(clocks.warnings(delay, flows.baselines));
        List<IntervalResult> intervals = intervals(plan, outcome, receipt, clocks, totals, warnings);
        PacketDrops packets = flows.packetDrops;
        Map<String, Long> attribution = LossAttribution.attribute(totals,
            flows.socketDrops == null ? null : packets.messagesAtMost(), packets.estimated(),
            receipt.hostCounters() != null ? receipt.hostCounters() : hostDeltas, senderEgress.silentDrops());
        warnings.add(packets.warning(attribution.get("receiverSocket")));
        warnings.add(senderEgress.warning(attribution.get("senderEgress")));
        warnings.reliability(transport, options, totals);
        SenderLimit senderLimit = SenderLimits.of(outcome.load(), totals, saturated, outcome.windowNs());
        warnings.add(senderLimit.warning());
        String source = Timing.sourceOf(flows.kernelStamped, delay.count());
        Latency oneWay = Latency.of(delay, clocks.basis(), clocks.uncertaintyNs()).measuredBy(source, timing);
        if (oneWay.count() > 0) {
            warnings.add(io.lossprobe.core.transport.WakeProbe.nearFloor(senderEnvironment, oneWay.p50Ns(), timing));
        }
        DelayBaselines baselines = flows.baselines;
        Echo echo = replies == null ? null : echo(flows, replies, rtt, outcome.windowNs(), timing);
        StepResult built = new StepResult(transport.name(), step, level, target, outcome.windowNs(),
            windowSample.skewNs(),
            totals, FlowAccounting.round(totals.lossPercent()), LossBurst.merge(flows.bursts),
            FlowAccounting.round(achievedSend), FlowAccounting.round(achievedReceive), saturated,
            oneWay,
            Latency.of(flows.transit, clocks.basis(), clocks.uncertaintyNs()).measuredBy(source, timing),
            baselines == null ? null
                : Latency.of(baselines.excess(), Latency.OVER_BASELINE, null).measuredBy(source, timing),
            baselines == null ? null : baselines.description(), clocks.offset(), clocks.driftNs(),
            outcome.lag().measuredBy(null, timing), flows.meanJitterNs(),
            Latency.of(flows.ipdv).measuredBy(source, timing), after.cpuSince(before), flows.socketDrops, hostDeltas,
            receipt.hostCounters(), receipt.cpu(), transportCounters, attribution, warnings.list(), echo,
            flows.flows, plan.messageSize(), intervals, senderLimit);
        return plan.mix() == null ? built
            : built.withSizes(sizes(plan, outcome.wireEnds(failures), failures, receipt.flows(), outcome.windowNs()));
    }

    /**
     * With a size mix: the step's counts per size. Sent per size follows from the wire sequence numbers, each of
     * which has one size: those below each flow's wire end, less the failed ones; received per size is what each
     * flow's receiver counted as messages arrived, checked against their lengths. Null when that cannot be exact
     * (a failed send that could not be recorded, or a receiver that did not count per size).
     */
    static List<io.lossprobe.core.result.SizeCounts> sizes(Plan plan, long[] wireEnd, FailedRanges[] failures,
                                                           FlowReceiver.Summary[] received, long windowNs) {
        io.lossprobe.core.plan.SizeMix mix = plan.mix();
        io.lossprobe.core.plan.SizeMix.Table table = mix.table();
        int n = table.sizes();
        long[] sent = new long[n];
        long[] got = new long[n];
        long[] failed = new long[n];
        for (int flow = 0; flow < wireEnd.length; flow++) {
            table.countRange(flow, 0, wireEnd[flow], sent);
            FailedRanges f = failures == null ? null : failures[flow];
            if (f != null) {
                if (f.unrecorded() > 0) {
                    return null;
                }
                for (int i = 0; i < f.size(); i++) {
                    table.countRange(flow, f.first(i), Math.min(f.end(i), wireEnd[flow]), failed);
                }
            }
            long[] byReceiver = flow < received.length ? received[flow].receivedBySize() : null;
            if (byReceiver == null || byReceiver.length != n) {
                return null;
            }
            for (int i = 0; i < n; i++) {
                got[i] += byReceiver[i];
            }
        }
        List<io.lossprobe.core.result.SizeCounts> out = new java.util.ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(io.lossprobe.core.result.SizeCounts.of(mix.sizes().get(i), mix.weights().get(i),
                sent[i] - failed[i], got[i], windowNs));
        }
        return out;
    }

    /** With {@code --interval}: the window cut into intervals, their warnings added to {@code warnings}; else null. */
    private static List<IntervalResult> intervals(Plan plan, SendSide.Outcome outcome, ReceiveSide.Receipt receipt,
                                                  Clocks clocks, Counts totals, StepWarnings warnings) {
        if (outcome.intervals() == null || receipt.intervals() == null) {
            return null;
        }
        IntervalResults cut = IntervalResults.of(outcome.intervals(), receipt.intervals(), plan.intervalNs(),
            outcome.windowNs(), clocks.basis(), clocks.uncertaintyNs());
        warnings.addAll(cut.warnings(totals));
        return cut.intervals();
    }

    /** Echo mode: the replies' totals, round trips and transit. */
    private static Echo echo(FlowAccounting flows, FlowReceiver.Summary[] replies, SignedHistogram rtt, long windowNs,
                             String timing) {
        String repliesSource = Timing.sourceOf(flows.repliesStamped, rtt.count());
        return flows.echoTotals(windowNs, Latency.of(rtt, null, null).measuredBy(repliesSource, timing),
            Latency.of(FlowAccounting.mergedTransit(replies), null, null).measuredBy(repliesSource, timing));
    }
}
