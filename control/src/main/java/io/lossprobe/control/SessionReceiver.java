package io.lossprobe.control;

import static io.lossprobe.control.EngineCalls.call;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.engine.LocalReceiveSide;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.StepStart;
import io.lossprobe.core.engine.StepTiming;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.plan.SearchPlan;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageAuth;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A session's receivers: one transport's for one message size, bound on this server, taking data only from the
 * controller's address. Every step's rate and window must be the checked plan's. The session checks which requests
 * may come in which state; this checks the order within a step and runs them.
 */
final class SessionReceiver {
    private final ReceiveSide side;
    /** The session's whole plan (every size): the steps' levels and windows are checked against it. */
    private final Plan plan;
    private int lastBegun = -1;
    private int lastClosed = -1;
    private boolean windowBegun;
    /** The open step's window (ns) and whether it counts per interval already. */
    private long stepWindowNs;
    private int stepIntervals;
    /** The open step's failure ledger as the controller ships it: the receivers skip what it records. */
    private FailedRanges[] failures;
    private HostCounters.Sample windowSample;

    private SessionReceiver(ReceiveSide side, Plan plan) {
        this.side = side;
        this.plan = plan;
    }

    /**
     * Data is taken only from the controller's address ({@code peer}), and echo replies go back to it, nowhere
     * else.
     */
    static SessionReceiver open(Transport transport, Plan plan, int messageSize, String bindAddress, String peer,
                                int runId, MessageAuth key) throws IOException {
        Plan pass = plan.forSize(messageSize);
        FlowReceiver[] flows = LocalReceiveSide.newFlows(pass, runId, key);
        return new SessionReceiver(call(() -> LocalReceiveSide.open(transport,
            new ReceiverSpec(pass, bindAddress, flows, pass.transportOptions(), pass.echo() ? peer : null, peer))),
            plan);
    }

    Reply.Ready ready() {
        return new Reply.Ready(side.environment());
    }

    int lastBegun() {
        return lastBegun;
    }

    /**
     * The step's rate and window must be the plan's: one of its levels over its duration, or within its search's
     * rates over the search's trial lengths. The tracking windows follow from that rate, as the controller's engine
     * derives them.
     */
    Reply beginStep(int step, Request.BeginStep r) throws IOException {
        Level level = planned(r.rate(), r.windowNs());
        // The request tells no warm-up, which receivers do not read: the plan's stands in.
        StepStart start = StepStart.of(plan, step, level, new StepTiming(plan.warmupNs(), r.windowNs(),
            plan.drainNs()), SendFilter.NONE, r.clockOffsetNs());
        call(() -> side.beginStep(start));
        failures = start.failures();
        lastBegun = step;
        windowBegun = false;
        windowSample = null;
        stepWindowNs = r.windowNs();
        stepIntervals = 0;
        return new Reply.Ok();
    }

    /** The level a step's rate and window stand for, when the plan has them; else the session ends. */
    private Level planned(long rate, long windowNs) throws ControlProtocolException {
        for (Level l : plan.levels()) {
            if (l.ratePerSecond() == rate && windowNs == plan.durationNs() && rate > 0) {
                return l;
            }
        }
        SearchPlan search = plan.search();
        if (search != null && rate >= search.minRate() && rate <= search.maxRate()
            && (windowNs == plan.durationNs() || windowNs == search.shortTrialNs())) {
            return Level.of(rate);
        }
        throw new ControlProtocolException("a step at " + rate + " messages/s for " + windowNs + " ns is not in the "
            + "plan");
    }

    Reply countIntervals(Request.CountIntervals r) throws IOException {
        if (plan.intervalNs() == 0) {
            throw new ControlProtocolException("the plan has no intervals");
        }
        // With no warm-up the window's counters are sampled before the first message, so before this too.
        if (stepIntervals > 0) {
            throw new ControlProtocolException("the intervals of step " + lastBegun + " were set already");
        }
        int count = plan.intervals(stepWindowNs);
        call(() -> side.countIntervals(r.windowStartNs(), plan.intervalNs(), count));
        stepIntervals = count;
        return new Reply.Ok();
    }

    Reply beginWindow() throws IOException {
        if (windowBegun) {
            throw new ControlProtocolException("the window of step " + lastBegun + " began already");
        }
        call(() -> side.beginWindow()); // socket drops first: the most time-sensitive
        windowSample = HostCounters.sample();
        windowBegun = true;
        return new Reply.Ok();
    }

    Reply progress(Request.Progress r) throws IOException {
        FailedRangesCodec.decodeInto(r.failed(), failures);
        return new Reply.Received(call(() -> side.progress()));
    }

    Reply closeStep(Request.CloseStep r) throws IOException {
        if (r.step() != lastBegun) {
            throw new ControlProtocolException("step " + r.step() + " is not the open one (" + lastBegun + ")");
        }
        if (r.wireEnd().length != plan.ports()) {
            throw new ControlProtocolException("wireEnd must hold " + plan.ports() + " numbers");
        }
        FailedRangesCodec.decodeInto(r.failed(), failures);
        ReceiveSide.Receipt receipt = call(() -> side.closeStep(r.step(), r.wireEnd()));
        failures = null;
        lastClosed = r.step();
        HostCounters.Sample after = HostCounters.sample();
        List<Reply.FlowSummary> flows = new ArrayList<>();
        int lostShare = r.lostSets() ? SummaryCodec.lostShare(receipt.flows().length) : 0;
        for (FlowReceiver.Summary s : receipt.flows()) {
            flows.add(SummaryCodec.encode(s, lostShare));
        }
        TransportReport report = receipt.report();
        return new Reply.StepResult(flows, report.counters(), report.flows(), report.notes(),
            windowSample == null ? null : after.deltaSince(windowSample),
            windowSample == null ? null : after.cpuSince(windowSample), SummaryCodec.encode(receipt.intervals()));
    }

    Reply late(Request.Late r) throws IOException {
        if (r.step() > lastClosed) {
            throw new ControlProtocolException("step " + r.step() + " has not closed");
        }
        ReceiveSide.Late late = call(() -> side.lateAfterClose(r.step()));
        return new Reply.LateCounts(late.first(), late.duplicates());
    }

    void close() throws Exception {
        side.close();
    }
}
