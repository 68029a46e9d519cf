package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.lossprobe.core.plan.Level;
import java.util.List;
import java.util.Map;

/**
 * One transport's result for one step: totals over all flows, rates, delays, host counters, then each flow.
 *
 * @param step                index of the step within the transport's run (0-based)
 * @param windowNs            measured window as it really ran (pacing start to the sender's stop)
 * @param counterSkewNs       how long after the window's first message its counters finished being sampled (0
 *                            when sampled before it, as with no warm-up): the deltas may miss that much
 * @param achievedSendRate    sent / window, messages per second
 * @param achievedReceiveRate received / window, messages per second
 * @param saturated           the achieved send rate fell more than 1% short of the target
 * @param senderLag           how late each window message was handed to the transport, against its intended send
 *                            time (ns)
 * @param transit             arrival minus the actual send time: the delay without the sender's lag (the path and
 *                            both hosts' stacks), on the same basis as {@code delay}
 * @param delayOverBaseline   between two hosts: each flow's delay in excess of its own baseline (see
 *                            {@code delayBaseline}); null on one host
 * @param delayBaseline       between two hosts: what {@code delayOverBaseline} is measured against
 * @param clockOffset         between two hosts: the other host's clock minus this one's, estimated over the control
 *                            channel before the step; {@code delay} is corrected by it
 * @param clockDriftNs        between two hosts: how far that offset moved by the step's end (in the uncertainty)
 * @param hostCounters        deltas of /proc/net/snmp, /proc/net/netstat and /proc/net/dev over the step (on the
 *                            sending host; both ends when they are the same host)
 * @param receiverHostCounters the same deltas on the receiving host, when it is another host (else null)
 * @param receiverCpu         the receiving host's CPU, when it is another host (else null)
 * @param transportCounters   transport-wide deltas (Aeron system counters, socket buffers granted, ...)
 * @param attribution         where the loss happened, as far as the counters tell
 * @param echo                request/response totals in echo mode (TPS, round trip, loss by direction), else null
 * @param messageSize         bytes per message of this step, header included (absent in older files: the plan's)
 * @param intervals           the step cut into intervals ({@code --interval}), else null
 * @param senderLimit         why the sender fell short of its schedule, with the figures (reason {@code none} when
 *                            it kept to it); absent in files written before it existed
 * @param direction           {@value #FORWARD} (this host sent) or {@value #REVERSE} (the server sent) in a run of
 *                            both directions ({@code run --bidir}); absent otherwise
 * @param probe               what a {@code run --probe echo} flow measured beside the step (the round trip under
 *                            the step's load); absent otherwise
 * @param sizes               with {@code --size-mix}: the step's counts per size of the mix, in the mix's order;
 *                            absent otherwise
 * @param receivers           a multicast step (docs/multicast.md): every receiver's own counts, in the order they
 *                            were given; the step's own figures are then the worst receiver's. Absent otherwise
 * @param worstReceiver       a multicast step: the receiver whose figures the step shows (the most lost, the first
 *                            of those that lost as much); absent otherwise
 * @param union               a multicast step: the union over its receivers (what every receiver got, what at least
 *                            one got), per flow too; absent otherwise
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StepResult(String transport, int step, Level level, long targetRate, long windowNs,
                         long counterSkewNs, Counts counts, double lossPercent, LossBurst lossBurst,
                         double achievedSendRate,
                         double achievedReceiveRate, boolean saturated, Latency delay, Latency transit,
                         Latency delayOverBaseline,
                         DelayBaseline delayBaseline, ClockOffset clockOffset, Long clockDriftNs, Latency senderLag,
                         double jitterNs, Latency ipdv, Cpu cpu, Long socketDrops, Map<String, Long> hostCounters,
                         Map<String, Long> receiverHostCounters, Cpu receiverCpu,
                         Map<String, Long> transportCounters, Map<String, Long> attribution, List<String> warnings,
                         Echo echo, List<FlowResult> flows, Integer messageSize,
                         @com.fasterxml.jackson.databind.annotation.JsonDeserialize(
                             using = LenientList.Intervals.class) List<IntervalResult> intervals,
                         SenderLimit senderLimit, String direction, ProbeResult probe, List<SizeCounts> sizes,
                         List<ReceiverResult> receivers, String worstReceiver, ReceiverUnion union) {
    public static final String FORWARD = "forward";
    public static final String REVERSE = "reverse";

    public StepResult {
        intervals = intervals == null ? null : List.copyOf(intervals);
        hostCounters = Maps.sorted(hostCounters);
        receiverHostCounters = receiverHostCounters == null ? null : Maps.sorted(receiverHostCounters);
        transportCounters = Maps.sorted(transportCounters);
        attribution = Maps.ordered(attribution);
        warnings = warnings == null ? List.of() : List.copyOf(warnings);
        flows = List.copyOf(flows);
        sizes = sizes == null ? null : List.copyOf(sizes);
        receivers = receivers == null ? null : List.copyOf(receivers);
    }

    /** A step of one message size (no mix). */
    public StepResult(String transport, int step, Level level, long targetRate, long windowNs, long counterSkewNs,
                      Counts counts, double lossPercent, LossBurst lossBurst, double achievedSendRate,
                      double achievedReceiveRate, boolean saturated, Latency delay, Latency transit,
                      Latency delayOverBaseline, DelayBaseline delayBaseline, ClockOffset clockOffset,
                      Long clockDriftNs, Latency senderLag, double jitterNs, Latency ipdv, Cpu cpu, Long socketDrops,
                      Map<String, Long> hostCounters, Map<String, Long> receiverHostCounters, Cpu receiverCpu,
                      Map<String, Long> transportCounters, Map<String, Long> attribution, List<String> warnings,
                      Echo echo, List<FlowResult> flows, Integer messageSize, List<IntervalResult> intervals,
                      SenderLimit senderLimit, String direction, ProbeResult probe) {
        this(transport, step, level, targetRate, windowNs, counterSkewNs, counts, lossPercent, lossBurst,
            achievedSendRate, achievedReceiveRate, saturated, delay, transit, delayOverBaseline, delayBaseline,
            clockOffset, clockDriftNs, senderLag, jitterNs, ipdv, cpu, socketDrops, hostCounters,
            receiverHostCounters, receiverCpu, transportCounters, attribution, warnings, echo, flows, messageSize,
            intervals, senderLimit, direction, probe, null, null, null, null);
    }

    /** The same step with its counts per size of the plan's size mix. */
    public StepResult withSizes(List<SizeCounts> newSizes) {
        return new StepResult(transport, step, level, targetRate, windowNs, counterSkewNs, counts, lossPercent,
            lossBurst, achievedSendRate, achievedReceiveRate, saturated, delay, transit, delayOverBaseline,
            delayBaseline, clockOffset, clockDriftNs, senderLag, jitterNs, ipdv, cpu, socketDrops, hostCounters,
            receiverHostCounters, receiverCpu, transportCounters, attribution, warnings, echo, flows, messageSize,
            intervals, senderLimit, direction, probe, newSizes, receivers, worstReceiver, union);
    }

    /** A step of one direction (the shape of every step before {@code --bidir}). */
    public StepResult(String transport, int step, Level level, long targetRate, long windowNs, long counterSkewNs,
                      Counts counts, double lossPercent, LossBurst lossBurst, double achievedSendRate,
                      double achievedReceiveRate, boolean saturated, Latency delay, Latency transit,
                      Latency delayOverBaseline, DelayBaseline delayBaseline, ClockOffset clockOffset,
                      Long clockDriftNs, Latency senderLag, double jitterNs, Latency ipdv, Cpu cpu, Long socketDrops,
                      Map<String, Long> hostCounters, Map<String, Long> receiverHostCounters, Cpu receiverCpu,
                      Map<String, Long> transportCounters, Map<String, Long> attribution, List<String> warnings,
                      Echo echo, List<FlowResult> flows, Integer messageSize, List<IntervalResult> intervals,
                      SenderLimit senderLimit) {
        this(transport, step, level, targetRate, windowNs, counterSkewNs, counts, lossPercent, lossBurst,
            achievedSendRate, achievedReceiveRate, saturated, delay, transit, delayOverBaseline, delayBaseline,
            clockOffset, clockDriftNs, senderLag, jitterNs, ipdv, cpu, socketDrops, hostCounters,
            receiverHostCounters, receiverCpu, transportCounters, attribution, warnings, echo, flows, messageSize,
            intervals, senderLimit, null, null);
    }

    /** The same step marked with its direction ({@link #FORWARD}, {@link #REVERSE}). */
    public StepResult withDirection(String newDirection) {
        return new StepResult(transport, step, level, targetRate, windowNs, counterSkewNs, counts, lossPercent,
            lossBurst, achievedSendRate, achievedReceiveRate, saturated, delay, transit, delayOverBaseline,
            delayBaseline, clockOffset, clockDriftNs, senderLag, jitterNs, ipdv, cpu, socketDrops, hostCounters,
            receiverHostCounters, receiverCpu, transportCounters, attribution, warnings, echo, flows, messageSize,
            intervals, senderLimit, newDirection, probe, sizes, receivers, worstReceiver, union);
    }

    /** The same step with what its {@code --probe} measured beside it. */
    public StepResult withProbe(ProbeResult newProbe) {
        return new StepResult(transport, step, level, targetRate, windowNs, counterSkewNs, counts, lossPercent,
            lossBurst, achievedSendRate, achievedReceiveRate, saturated, delay, transit, delayOverBaseline,
            delayBaseline, clockOffset, clockDriftNs, senderLag, jitterNs, ipdv, cpu, socketDrops, hostCounters,
            receiverHostCounters, receiverCpu, transportCounters, attribution, warnings, echo, flows, messageSize,
            intervals, senderLimit, direction, newProbe, sizes, receivers, worstReceiver, union);
    }

    /**
     * What the step's figures belong to when results are grouped: its transport, and in a run of both directions
     * its direction too ({@code udp reverse}).
     */
    @com.fasterxml.jackson.annotation.JsonIgnore
    public String series() {
        return direction == null ? transport : transport + " " + direction;
    }

    /** A step without a recorded message size or intervals (the shape of steps before they existed). */
    public StepResult(String transport, int step, Level level, long targetRate, long windowNs, long counterSkewNs,
                      Counts counts, double lossPercent, LossBurst lossBurst, double achievedSendRate,
                      double achievedReceiveRate, boolean saturated, Latency delay, Latency transit,
                      Latency delayOverBaseline, DelayBaseline delayBaseline, ClockOffset clockOffset,
                      Long clockDriftNs, Latency senderLag, double jitterNs, Latency ipdv, Cpu cpu, Long socketDrops,
                      Map<String, Long> hostCounters, Map<String, Long> receiverHostCounters, Cpu receiverCpu,
                      Map<String, Long> transportCounters, Map<String, Long> attribution, List<String> warnings,
                      Echo echo, List<FlowResult> flows) {
        this(transport, step, level, targetRate, windowNs, counterSkewNs, counts, lossPercent, lossBurst,
            achievedSendRate, achievedReceiveRate, saturated, delay, transit, delayOverBaseline, delayBaseline,
            clockOffset, clockDriftNs, senderLag, jitterNs, ipdv, cpu, socketDrops, hostCounters,
            receiverHostCounters, receiverCpu, transportCounters, attribution, warnings, echo, flows, null, null, null);
    }

    /** The same step with its size and intervals. */
    public StepResult withSizeAndIntervals(Integer size, List<IntervalResult> newIntervals) {
        return new StepResult(transport, step, level, targetRate, windowNs, counterSkewNs, counts, lossPercent,
            lossBurst, achievedSendRate, achievedReceiveRate, saturated, delay, transit, delayOverBaseline,
            delayBaseline, clockOffset, clockDriftNs, senderLag, jitterNs, ipdv, cpu, socketDrops, hostCounters,
            receiverHostCounters, receiverCpu, transportCounters, attribution, warnings, echo, flows, size,
            newIntervals, senderLimit, direction, probe, sizes, receivers, worstReceiver, union);
    }

    /**
     * The same step with its late counts updated (one per flow, in flow order): first arrivals and duplicates,
     * including those that came after the step closed.
     */
    public StepResult withLate(long[] latePerFlow, long[] lateDuplicatesPerFlow) {
        List<FlowResult> updated = FlowResult.withLate(flows, latePerFlow, lateDuplicatesPerFlow);
        return new StepResult(transport, step, level, targetRate, windowNs, counterSkewNs,
            counts.withLate(FlowResult.sum(latePerFlow), FlowResult.sum(lateDuplicatesPerFlow)),
            lossPercent,
            lossBurst, achievedSendRate, achievedReceiveRate, saturated, delay, transit, delayOverBaseline,
            delayBaseline,
            clockOffset, clockDriftNs, senderLag, jitterNs, ipdv, cpu,
            socketDrops, hostCounters, receiverHostCounters, receiverCpu, transportCounters, attribution, warnings,
            echo, updated, messageSize, intervals, senderLimit, direction, probe, sizes, receivers, worstReceiver,
            union);
    }

    /** The same step with {@code newWarnings} in place of its warnings. */
    public StepResult withWarnings(List<String> newWarnings) {
        return new StepResult(transport, step, level, targetRate, windowNs, counterSkewNs, counts, lossPercent,
            lossBurst, achievedSendRate, achievedReceiveRate, saturated, delay, transit, delayOverBaseline,
            delayBaseline, clockOffset, clockDriftNs, senderLag, jitterNs, ipdv, cpu, socketDrops, hostCounters,
            receiverHostCounters, receiverCpu, transportCounters, attribution, newWarnings, echo, flows, messageSize,
            intervals, senderLimit, direction, probe, sizes, receivers, worstReceiver, union);
    }

    /** The same multicast step with the union over its receivers. */
    public StepResult withUnion(ReceiverUnion newUnion) {
        return new StepResult(transport, step, level, targetRate, windowNs, counterSkewNs, counts, lossPercent,
            lossBurst, achievedSendRate, achievedReceiveRate, saturated, delay, transit, delayOverBaseline,
            delayBaseline, clockOffset, clockDriftNs, senderLag, jitterNs, ipdv, cpu, socketDrops, hostCounters,
            receiverHostCounters, receiverCpu, transportCounters, attribution, warnings, echo, flows, messageSize,
            intervals, senderLimit, direction, probe, sizes, receivers, worstReceiver, newUnion);
    }

    /**
     * A multicast step ({@code receivers} each got every flow): this step is the worst receiver's, named by
     * {@code worst}, and lists every receiver's own counts.
     */
    public StepResult withReceivers(List<ReceiverResult> newReceivers, String worst) {
        return new StepResult(transport, step, level, targetRate, windowNs, counterSkewNs, counts, lossPercent,
            lossBurst, achievedSendRate, achievedReceiveRate, saturated, delay, transit, delayOverBaseline,
            delayBaseline, clockOffset, clockDriftNs, senderLag, jitterNs, ipdv, cpu, socketDrops, hostCounters,
            receiverHostCounters, receiverCpu, transportCounters, attribution, warnings, echo, flows, messageSize,
            intervals, senderLimit, direction, probe, sizes, newReceivers, worst, union);
    }
}
