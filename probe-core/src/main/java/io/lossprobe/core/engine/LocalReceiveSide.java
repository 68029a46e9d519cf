package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.Transport;
import java.util.Map;

/** Receivers in this process: the transport's endpoint delivering to this side's {@link FlowReceiver}s. */
public final class LocalReceiveSide implements ReceiveSide {
    private final ReceiverEndpoint endpoint;
    private final FlowReceiver[] flows;
    /** The open step's per-interval counts, one per flow, or null. */
    private io.lossprobe.core.accounting.IntervalTally[] tallies;

    private LocalReceiveSide(ReceiverEndpoint endpoint, FlowReceiver[] flows) {
        this.endpoint = endpoint;
        this.flows = flows;
    }

    /** Binds the transport's receivers for {@code spec}'s plan on {@code spec.bindAddress()}. */
    public static LocalReceiveSide open(Transport transport, ReceiverSpec spec) throws Exception {
        return new LocalReceiveSide(transport.openReceiver(spec), spec.flows());
    }

    /** Fresh per-flow accounting for a plan's flows. */
    public static FlowReceiver[] newFlows(int flows, int runId, int messageSize, int steps,
                                          io.lossprobe.core.wire.MessageAuth auth) {
        FlowReceiver[] out = new FlowReceiver[flows];
        for (int i = 0; i < flows; i++) {
            out[i] = new FlowReceiver(i, runId, messageSize, steps, false, auth);
        }
        return out;
    }

    /** The receivers of one pass of {@code pass} (its size, or its size mix), as {@link #newFlows}. */
    public static FlowReceiver[] newFlows(io.lossprobe.core.plan.Plan pass, int runId,
                                          io.lossprobe.core.wire.MessageAuth auth) {
        FlowReceiver[] out = newFlows(pass.ports(), runId, pass.messageSize(), pass.stepsPerTransport(), auth);
        io.lossprobe.core.plan.SizeMix mix = pass.mix();
        for (FlowReceiver f : out) {
            f.sizeMix(mix);
        }
        return out;
    }

    @Override
    public Map<String, Long> environment() {
        return endpoint.environment();
    }

    /** The endpoint learns the step's rate: a receiver may read differently at different rates. */
    @Override
    public void beginStep(StepStart start) throws Exception {
        int step = start.step();
        int[] windowBits = start.windowBits();
        io.lossprobe.core.accounting.FailedRanges[] failures = start.failures();
        long clockOffsetNs = start.clockOffsetNs();
        tallies = null;
        endpoint.beginStep(step, start.level());
        endpoint.onFlowThreads(i -> flows[i].beginStep(step, windowBits[i], failures[i], clockOffsetNs));
    }

    @Override
    public void countIntervals(long windowStartNs, long intervalNs, int intervals) {
        tallies = new io.lossprobe.core.accounting.IntervalTally[flows.length];
        for (int i = 0; i < flows.length; i++) {
            tallies[i] = new io.lossprobe.core.accounting.IntervalTally(windowStartNs, intervalNs, intervals);
            flows[i].countIntervals(tallies[i]);
        }
    }

    @Override
    public io.lossprobe.core.accounting.PacketSlots[] capturePackets(int every, int capacity) {
        io.lossprobe.core.accounting.PacketSlots[] out = new io.lossprobe.core.accounting.PacketSlots[flows.length];
        for (int i = 0; i < flows.length; i++) {
            out[i] = new io.lossprobe.core.accounting.PacketSlots(every, capacity);
            flows[i].capturePackets(out[i]);
        }
        return out;
    }

    @Override
    public void beginWindow() throws Exception {
        endpoint.beginWindow();
    }

    @Override
    public long[] progress() {
        long[] out = new long[flows.length];
        for (int i = 0; i < flows.length; i++) {
            out[i] = flows[i].progress();
        }
        return out;
    }

    @Override
    public Receipt closeStep(int step, long[] wireEnd) throws Exception {
        FlowReceiver.Summary[] summaries = new FlowReceiver.Summary[flows.length];
        endpoint.onFlowThreads(i -> summaries[i] = flows[i].closeStep(wireEnd[i]));
        // The tallies were last written on the receiving thread before the close ran there: read after it.
        io.lossprobe.core.accounting.ReceivedIntervals intervals = tallies == null ? null
            : io.lossprobe.core.accounting.ReceivedIntervals.sum(tallies);
        tallies = null;
        return new Receipt(summaries, endpoint.endStep(), null, null, intervals);
    }

    @Override
    public Late lateAfterClose(int step) {
        long[] first = new long[flows.length];
        long[] duplicates = new long[flows.length];
        for (int i = 0; i < flows.length; i++) {
            first[i] = flows[i].lateAfterClose(step);
            duplicates[i] = flows[i].lateDuplicatesAfterClose(step);
        }
        return new Late(first, duplicates);
    }

    @Override
    public void replyFilter(io.lossprobe.core.accounting.SendFilter filter) {
        for (FlowReceiver f : flows) {
            f.replyFilter(filter);
        }
    }

    @Override
    public ReceiverEndpoint localEndpoint() {
        return endpoint;
    }

    @Override
    public void close() throws Exception {
        endpoint.close();
    }
}
