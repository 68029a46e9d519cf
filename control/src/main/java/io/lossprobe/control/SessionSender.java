package io.lossprobe.control;

import static io.lossprobe.control.EngineCalls.call;

import io.lossprobe.core.engine.LocalSendSide;
import io.lossprobe.core.engine.SendSide;
import io.lossprobe.core.engine.StepStart;
import io.lossprobe.core.engine.StepTiming;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.pacing.FlowSendCounts;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageAuth;
import java.io.IOException;
import java.util.Map;

/**
 * A session's senders for a {@code --reverse} run: one transport's, towards the controller's own address and never
 * anywhere else, every step's rates taken from the checked plan. The session checks the order of the requests;
 * this runs them.
 */
final class SessionSender {
    /**
     * How long one {@code punched} waits for the punches not yet arrived: short, so the controller sends its
     * punches again soon when one was lost (its own deadline bounds the whole exchange).
     */
    static final long PUNCH_WAIT_NS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(200);

    private final LocalSendSide side;
    private final Plan plan;
    private int lastBegun = -1;
    private boolean started;
    private boolean windowBegun;
    /** How much of each flow's failure ledger was shipped to the controller. */
    private int[] failuresShipped;

    /** The flows still without their receiver's punch (all of them until the first {@link #punched}). */
    private int[] unpunched;

    private SessionSender(LocalSendSide side, Plan plan) {
        this.side = side;
        this.plan = plan;
        this.unpunched = side.sourcePorts().length == 0 ? new int[0]
            : java.util.stream.IntStream.range(0, plan.ports()).toArray();
    }

    /**
     * @param peer    the controller's address (or, {@code run --from}, the other serve's): the only one these senders
     *                send to
     * @param source  where the data leaves from (this server's address on the controller's connection), or null
     * @param reach   the controller's own receivers punch ({@code PUNCHES}, or {@code BEHIND_NAT} when the
     *                controller is behind a NAT); the other serve's ({@code run --from}) do not ({@code DIRECT})
     */
    static SessionSender open(Transport transport, Plan plan, String peer, int runId, MessageAuth key,
                              SenderSpec.Reach reach, String source) throws IOException {
        SenderSpec spec = new SenderSpec(plan, peer, runId, plan.transportOptions(), key).reaching(reach)
            .from(source);
        try {
            return new SessionSender(call(() -> LocalSendSide.open(transport, spec)), plan);
        } catch (IOException e) {
            // One line for the controller's user: which senders, between which addresses, and the transport's reason.
            throw new IOException(transport.name() + ": cannot send from " + (source == null ? "this server" : source)
                + " to " + peer + ": " + e.getMessage(), e);
        }
    }

    int lastBegun() {
        return lastBegun;
    }

    /** @param observed the controller's address as this server sees it */
    Reply.SenderReady ready(String observed) {
        return new Reply.SenderReady(side.environment(), side.sourcePorts(), observed);
    }

    /** Waits up to {@link #PUNCH_WAIT_NS} for the punches not yet arrived; answers with the flows still without. */
    Reply.Punches punched() throws IOException {
        if (side.sourcePorts().length == 0) {
            throw new ControlProtocolException("these senders take no punches");
        }
        unpunched = call(() -> side.awaitPunches(PUNCH_WAIT_NS));
        return new Reply.Punches(unpunched);
    }

    Reply.SendReady begin(int step) throws IOException {
        if (unpunched.length > 0) {
            throw new ControlProtocolException(unpunched.length + " of " + plan.ports() + " flows have no punch from"
                + " the controller's receivers yet: nothing to send them to");
        }
        // The rates from the checked plan, never from the message; only the step's number travels.
        StepStart planned = StepStart.of(plan, step, plan.levels().get(step), StepTiming.of(plan), SendFilter.NONE,
            0);
        // No tracking windows for the replies: they are counted at the controller.
        StepStart start = new StepStart(step, planned.level(), planned.flowRates(), new int[planned.flows()],
            SendFilter.NONE, planned.warmupNs(), planned.windowNs(), planned.failures(), 0, planned.direction());
        call(() -> side.beginStep(start));
        failuresShipped = new int[plan.ports()];
        lastBegun = step;
        started = false;
        windowBegun = false;
        return new Reply.SendReady(plan.warmupNs());
    }

    Reply start() throws IOException {
        if (started) {
            throw new ControlProtocolException("step " + lastBegun + " started already");
        }
        call(() -> side.start());
        started = true;
        return new Reply.Ok();
    }

    /**
     * The window's counters, sampled once a step: after the start, or before it when the step has no warm-up (the
     * controller's engine then samples before the first message, which is the exact case).
     */
    Reply window() throws IOException {
        if (windowBegun) {
            throw new ControlProtocolException("step " + lastBegun + "'s window began already");
        }
        if (!started && plan.warmupNs() > 0) {
            throw new ControlProtocolException("step " + lastBegun + " has not started");
        }
        call(() -> side.beginWindow());
        windowBegun = true;
        return new Reply.Ok();
    }

    Reply progress() throws IOException {
        boolean done = call(() -> side.awaitDone(1));
        long sent = call(side::sentProgress);
        long[] perFlow = done ? call(side::sent) : null;
        return new Reply.Sent(done, sent, perFlow, FailedRangesCodec.encodeNew(side.failures(), failuresShipped));
    }

    /** Whether the step's sending is under way: started and not yet done. */
    boolean sending() throws IOException {
        return started && !call(() -> side.awaitDone(1));
    }

    Reply abort() throws IOException {
        call(() -> side.abort());
        return new Reply.Ok();
    }

    Reply result() throws IOException {
        if (!call(() -> side.awaitDone(1))) {
            throw new ControlProtocolException("the step is still sending");
        }
        SendSide.Outcome outcome = call(side::finish);
        long[][] counts = new long[outcome.counts().length][];
        for (int i = 0; i < counts.length; i++) {
            FlowSendCounts c = outcome.counts()[i];
            counts[i] = new long[] {c.scheduled(), c.sent(), c.sendFailed(), c.behind()};
        }
        Latency lag = outcome.lag();
        Map<Integer, long[]> failed = FailedRangesCodec.encodeNew(side.failures(), failuresShipped);
        TransportReport report = outcome.report();
        return new Reply.SendOutcome(counts, outcome.windowNs(), outcome.failedAfterClose(), failed,
            new Reply.Lag(lag.count(), lag.meanNs(), lag.minNs(), lag.p50Ns(), lag.p90Ns(), lag.p99Ns(),
                lag.p999Ns(), lag.maxNs()), SenderLoadCodec.encode(report.counters(), outcome.load()), report.flows(),
            report.notes());
    }

    /** Stops sending and closes the senders. */
    void close() throws Exception {
        side.abort();
        side.close();
    }
}
