package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.ClockOffset;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageAuth;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * One receiver of a multicast run (docs/multicast.md#a-receiver-that-is-lost): a receiver that fails is a receiver
 * with loss, not a failed run. When a call on its receive side fails with an {@link IOException} (its serve died,
 * its control connection dropped or fell silent, its serve could not go on), it is <em>gone</em>: it is never asked
 * anything again, the run's listener is told once, and every step from then on, the one it failed in included,
 * counts everything sent as lost to it: its receipt is that of flows that received nothing, each accounted by a
 * flow receiver of its own closed at the step's wire ends, so its identities hold, the worst receiver is the gone
 * one and a policy on loss fails on it. What it had received of the step it failed in died with it: the controller
 * never learnt it. The other receivers go on; {@link StepSides} ends the run once every receiver is gone.
 */
final class MulticastReceiveSide implements ReceiveSide {
    private final ReceiveSide delegate;
    private final String name;
    private final String transport;
    private final Plan pass;
    private final int runId;
    private final MessageAuth auth;
    private final RunListener listener;
    private final Map<String, Long> environment;
    private final Map<Integer, Late> lateSeen = new HashMap<>();
    private volatile String gone;
    private StepStart open;
    /** The open step's flows that receive nothing, once the receiver is gone. */
    private FlowReceiver[] nothing;

    private MulticastReceiveSide(ReceiveSide delegate, String name, String transport, Plan pass, int runId,
                                 MessageAuth auth, RunListener listener, String gone) {
        this.delegate = delegate;
        this.name = name;
        this.transport = transport;
        this.pass = pass;
        this.runId = runId;
        this.auth = auth;
        this.listener = listener;
        this.environment = delegate == null ? Map.of() : delegate.environment();
        this.gone = gone;
    }

    /** {@code delegate}, a receiver that takes part, named {@code name} (its own when it has one). */
    static MulticastReceiveSide of(ReceiveSide delegate, String name, String transport, Plan pass, int runId,
                                   MessageAuth auth, RunListener listener) {
        return new MulticastReceiveSide(delegate, delegate.name() != null ? delegate.name() : name, transport, pass,
            runId, auth, listener, null);
    }

    /** A receiver lost in an earlier pass for {@code why}: every step of this pass counts all sent as lost. */
    static MulticastReceiveSide gone(String name, String why, String transport, Plan pass, int runId,
                                     MessageAuth auth) {
        return new MulticastReceiveSide(null, name, transport, pass, runId, auth, null, why);
    }

    /** Why and when the receiver was lost, or null while it takes part. */
    String gone() {
        return gone;
    }

    private void lose(Exception e) {
        lose(e, open == null ? "between " + transport + " steps" : "during " + transport + " step " + open.step());
    }

    private void lose(Exception e, String when) {
        if (gone != null) {
            return;
        }
        gone = when + ": " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
        try {
            delegate.close(); // a serve still there is told; a dead connection fails at once
        } catch (Exception closing) {
            // Gone already.
        }
        listener.receiverGone(name, gone);
        if (open != null) {
            nothing = nothingReceived(open);
        }
    }

    private FlowReceiver[] nothingReceived(StepStart start) {
        FlowReceiver[] flows = LocalReceiveSide.newFlows(pass, runId, auth);
        for (int i = 0; i < flows.length; i++) {
            flows[i].beginStep(start.step(), start.windowBits()[i], start.failures()[i], start.clockOffsetNs());
        }
        return flows;
    }

    @Override
    public Map<String, Long> environment() {
        return environment;
    }

    @Override
    public void beginStep(StepStart start) throws Exception {
        open = start;
        if (gone != null) {
            nothing = nothingReceived(start);
            return;
        }
        try {
            delegate.beginStep(start);
        } catch (IOException e) {
            lose(e, "at the start of " + transport + " step " + start.step());
        }
    }

    @Override
    public void countIntervals(long windowStartNs, long intervalNs, int intervals) throws Exception {
        if (gone == null) {
            try {
                delegate.countIntervals(windowStartNs, intervalNs, intervals);
            } catch (IOException e) {
                lose(e);
            }
        }
    }

    @Override
    public ClockOffset clockOffset() throws Exception {
        if (gone == null) {
            try {
                return delegate.clockOffset();
            } catch (IOException e) {
                lose(e);
            }
        }
        return null;
    }

    @Override
    public void beginWindow() throws Exception {
        if (gone == null) {
            try {
                delegate.beginWindow();
            } catch (IOException e) {
                lose(e);
            }
        }
    }

    /** Null once the receiver is gone: what it received no longer holds up the drain. */
    @Override
    public long[] progress() throws Exception {
        if (gone == null) {
            try {
                return delegate.progress();
            } catch (IOException e) {
                lose(e);
            }
        }
        return null;
    }

    @Override
    public Receipt closeStep(int step, long[] wireEnd) throws Exception {
        return closeStep(step, wireEnd, false);
    }

    /**
     * The receiver's receipt ({@code lostSets} asked of it, for the union over the receivers), or, once it is gone,
     * its own flows' that received nothing (their lost sets: everything sent).
     */
    @Override
    public Receipt closeStep(int step, long[] wireEnd, boolean lostSets) throws Exception {
        if (gone == null) {
            try {
                Receipt r = delegate.closeStep(step, wireEnd, lostSets);
                open = null;
                return r;
            } catch (IOException e) {
                lose(e);
            }
        }
        FlowReceiver.Summary[] flows = new FlowReceiver.Summary[nothing.length];
        for (int i = 0; i < flows.length; i++) {
            flows[i] = nothing[i].closeStep(wireEnd[i]);
        }
        open = null;
        nothing = null;
        // Another host's counters and CPU, unknown: as a serve that reported none.
        return new Receipt(flows, TransportReport.EMPTY, Map.of(), null);
    }

    @Override
    public Late lateAfterClose(int step) throws Exception {
        if (gone == null) {
            try {
                Late late = delegate.lateAfterClose(step);
                lateSeen.put(step, late);
                return late;
            } catch (IOException e) {
                lose(e);
            }
        }
        Late seen = lateSeen.get(step);
        return seen != null ? seen : new Late(new long[pass.ports()], new long[pass.ports()]);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public ReceiverEndpoint localEndpoint() {
        return delegate == null ? null : delegate.localEndpoint();
    }

    @Override
    public void close() throws Exception {
        if (gone == null) {
            delegate.close();
        }
    }
}
