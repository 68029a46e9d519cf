package io.lossprobe.control;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.accounting.SequenceTracker;
import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.engine.LocalReceiveSide;
import io.lossprobe.core.engine.LocalSendSide;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.SendSide;
import io.lossprobe.core.pacing.SendFilter;
import io.lossprobe.core.pacing.SendLoop;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportOptions;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageAuth;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One authenticated controller's session, as a state machine: each message type has one handler and the states
 * it is allowed in; anything else ends the session with the reason. The session runs the plan it was given and
 * nothing more: each transport opened at most once per direction, steps begun in increasing order, every rate,
 * window and port derived from the checked plan, never from a later message, and the whole session bounded in
 * time.
 *
 * <pre>
 *   PLAN --plan--> IDLE --open--> RECEIVING --begin-step--> RX_STEP --close-step--> RECEIVING
 *                   |  \                               (count-intervals, begin-window, progress, late, clock)
 *                   |   --open-sender--> SENDING --send-begin--> TX_STEP --send-result--> SENDING
 *                   |                                              (send-start, send-window, send-progress, send-abort)
 *   close: any state after PLAN -> IDLE;  clock: any state after PLAN;  bye: any state -> DONE
 * </pre>
 */
final class ServerSession {
    enum State {
        PLAN("before the plan"), IDLE("with nothing open"), RECEIVING("with receivers open and no step begun"),
        RX_STEP("during a receive step"), SENDING("with senders open and no step begun"),
        TX_STEP("during a send step"), DONE("after bye");

        final String words;

        State(String words) {
            this.words = words;
        }
    }

    /** Slack on top of twice the plan's own duration before a session is ended as overdue. */
    static final long SESSION_SLACK_NS = TimeUnit.MINUTES.toNanos(2);

    @FunctionalInterface
    private interface Handler<R extends Request> {
        Reply handle(R request) throws IOException;
    }

    private record Rule(Set<State> allowed, Handler<Request> handler) {
    }

    private final ControlServer server;
    final int id;
    private final FrameChannel channel;
    private final byte[] sessionKey;
    private final Map<String, Transport> transports;
    private final Map<Class<?>, Rule> rules = new HashMap<>();
    private final String peer;
    volatile int basePort;
    volatile int ports;

    private State state = State.PLAN;
    private Plan plan;
    private int runId;
    private long deadlineNs = Long.MAX_VALUE;
    private final Set<String> openedReceivers = new HashSet<>();
    private final Set<String> openedSenders = new HashSet<>();
    private ReceiveSide side;
    private int lastBegun = -1;
    private int lastClosed = -1;
    private boolean windowBegun;
    /** The open step's window (ns) and whether it counts per interval already. */
    private long stepWindowNs;
    private int stepIntervals;
    /** The open step's failure ledger as the controller ships it: the receivers skip what it records. */
    private FailedRanges[] failures;
    private HostCounters.Sample windowSample;
    private SendSide sendSide;
    private int lastSendBegun = -1;
    private boolean sendStarted;
    /** Reverse runs: how much of each flow's failure ledger was shipped to the controller. */
    private int[] failuresShipped;

    ServerSession(ControlServer server, int id, FrameChannel channel, byte[] sessionKey,
                  Map<String, Transport> transports) {
        this.server = server;
        this.id = id;
        this.channel = channel;
        this.sessionKey = sessionKey;
        this.transports = Map.copyOf(transports);
        this.peer = channel.remoteAddress();
        EnumSet<State> afterPlan = EnumSet.of(State.IDLE, State.RECEIVING, State.RX_STEP, State.SENDING,
            State.TX_STEP);
        on(Request.PlanRequest.class, EnumSet.of(State.PLAN), this::plan);
        on(Request.Open.class, EnumSet.of(State.IDLE, State.RECEIVING), this::open);
        on(Request.BeginStep.class, EnumSet.of(State.RECEIVING), this::beginStep);
        on(Request.CountIntervals.class, EnumSet.of(State.RX_STEP), this::countIntervals);
        on(Request.BeginWindow.class, EnumSet.of(State.RX_STEP), this::beginWindow);
        on(Request.Progress.class, EnumSet.of(State.RX_STEP), this::progress);
        on(Request.CloseStep.class, EnumSet.of(State.RX_STEP), this::closeStep);
        on(Request.Late.class, EnumSet.of(State.RECEIVING, State.RX_STEP), this::late);
        on(Request.OpenSender.class, EnumSet.of(State.IDLE, State.SENDING), this::openSender);
        on(Request.SendBegin.class, EnumSet.of(State.SENDING), this::sendBegin);
        on(Request.SendStart.class, EnumSet.of(State.TX_STEP), this::sendStart);
        on(Request.SendWindow.class, EnumSet.of(State.TX_STEP), this::sendWindow);
        on(Request.SendProgress.class, EnumSet.of(State.TX_STEP), this::sendProgress);
        on(Request.SendAbort.class, EnumSet.of(State.SENDING, State.TX_STEP), this::sendAbort);
        on(Request.SendResult.class, EnumSet.of(State.TX_STEP), this::sendResult);
        on(Request.Close.class, afterPlan, this::close);
        on(Request.Clock.class, afterPlan, this::clock);
        on(Request.Bye.class, EnumSet.complementOf(EnumSet.of(State.DONE)), r -> {
            state = State.DONE;
            return null;
        });
    }

    @SuppressWarnings("unchecked")
    private <R extends Request> void on(Class<R> type, Set<State> allowed, Handler<R> handler) {
        rules.put(type, new Rule(allowed, (Handler<Request>) handler));
    }

    /**
     * Serves requests until bye or failure; a failure is answered with its reason (best effort) and logged. Always
     * closes what the session opened.
     */
    void run() {
        try {
            while (state != State.DONE) {
                Request request = Codec.request(channel.receive(ControlServer.MAX_REQUEST_BYTES,
                    System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(server.limits().idleTimeoutMs())));
                if (System.nanoTime() - deadlineNs > 0) {
                    throw new ControlProtocolException("the session ran past twice its plan's duration");
                }
                Rule rule = rules.get(request.getClass());
                if (rule == null) {
                    throw new ControlProtocolException("'" + Codec.typeOf(request) + "' belongs to the handshake");
                }
                if (!rule.allowed().contains(state)) {
                    throw new ControlProtocolException("'" + Codec.typeOf(request) + "' is not allowed " + state.words);
                }
                Reply reply = rule.handler().handle(request);
                if (reply != null) {
                    channel.send(Codec.encode(reply));
                }
            }
            server.log("session " + id + " from " + peer + " finished");
        } catch (IOException e) {
            String why = PeerText.clean(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
            server.log("session " + id + " from " + peer + " closed: " + why);
            answer(why);
        } catch (RuntimeException | Error e) {
            server.internalError("session " + id + " from " + peer, e);
            answer("internal error on the server");
        } finally {
            closeSide();
            closeSender();
        }
    }

    private void answer(String why) {
        try {
            channel.send(Codec.encode(new Reply.Failure(Codec.VERSION, why)));
        } catch (IOException | RuntimeException ignored) {
            // The controller is gone already.
        }
    }

    private Reply plan(Request.PlanRequest r) throws IOException {
        Plan requested = r.plan();
        Map<String, Transport> used = new LinkedHashMap<>();
        for (String t : requested.transports()) {
            Transport transport = transports.get(t);
            if (transport == null) {
                throw new ControlProtocolException("this server has no transport '" + PeerText.clean(t) + "'");
            }
            used.put(t, transport);
        }
        Map<String, String> options = requested.transportOptions();
        try {
            TransportOptions.validateOnServer(options, used.values());
        } catch (IllegalArgumentException e) {
            throw new ControlProtocolException(PeerText.clean(e.getMessage()));
        }
        String why = server.limits().refuse(requested, used, options);
        if (why != null) {
            throw new ControlProtocolException(why);
        }
        if (!server.reserve(this, requested.basePort(), requested.ports())) {
            throw new ControlProtocolException("ports " + requested.basePort() + "-"
                + (requested.basePort() + requested.ports() - 1) + " are in use by another session");
        }
        plan = requested.withBindAddress(server.bindAddress());
        runId = r.runId();
        long stepNs = plan.warmupNs() + plan.durationNs() + plan.drainNs();
        // Bounded by the limits' check: levels and search steps, for each size, of every transport.
        long plannedNs = stepNs * plan.stepsPerTransport() * plan.transports().size();
        deadlineNs = System.nanoTime() + 2 * plannedNs + SESSION_SLACK_NS;
        RunEngine.prewarm(); // counter readers' first use is slow: not mid-step
        server.log("session " + id + " from " + peer + ": " + plan.ports() + " ports from " + plan.basePort() + ", "
            + plan.transports() + (options.isEmpty() ? "" : ", options " + PeerText.clean(options.toString())));
        state = State.IDLE;
        return new Reply.PlanOk(server.bindAddress());
    }

    private String planTransport(String name, Set<String> opened, String what) throws ControlProtocolException {
        if (!plan.transports().contains(name)) {
            throw new ControlProtocolException("transport '" + name + "' is not in the plan");
        }
        if (!opened.add(name)) {
            throw new ControlProtocolException("the " + what + " of '" + name + "' were opened once already");
        }
        return name;
    }

    private MessageAuth dataKey() {
        return MessageAuth.derive(sessionKey, runId);
    }

    private Reply open(Request.Open r) throws IOException {
        if (!plan.sizes().contains(r.messageSize())) {
            throw new ControlProtocolException("message size " + r.messageSize() + " is not in the plan");
        }
        if (!plan.transports().contains(r.transport())) {
            throw new ControlProtocolException("transport '" + r.transport() + "' is not in the plan");
        }
        String name = r.transport();
        if (!openedReceivers.add(name + "/" + r.messageSize())) {
            throw new ControlProtocolException("the receivers of '" + name + "' were opened once already"
                + (plan.sizes().size() > 1 ? " for " + r.messageSize() + "-byte messages" : ""));
        }
        closeSide();
        Plan pass = plan.forSize(r.messageSize());
        FlowReceiver[] flows = LocalReceiveSide.newFlows(pass.ports(), runId, pass.messageSize(),
            pass.stepsPerTransport(), dataKey());
        // Data is taken only from the controller's address, and echo replies go back to it, nowhere else.
        side = call(() -> LocalReceiveSide.open(transports.get(name),
            new ReceiverSpec(pass, server.bindAddress(), flows, pass.transportOptions(), pass.echo() ? peer : null,
                peer)));
        lastBegun = -1;
        lastClosed = -1;
        state = State.RECEIVING;
        return new Reply.Ready(side.environment());
    }

    private int nextStep(int step, int last, int steps) throws ControlProtocolException {
        if (step <= last || step >= steps) {
            throw new ControlProtocolException("step " + step + " out of order: the last begun was " + last
                + " and the plan has " + steps);
        }
        return step;
    }

    /**
     * The step's rate and window must be the plan's: one of its levels over its duration, or within its search's
     * rates over the search's trial lengths. The tracking windows follow from that rate, as the controller's engine
     * derives them.
     */
    private Reply beginStep(Request.BeginStep r) throws IOException {
        int step = nextStep(r.step(), lastBegun, plan.stepsPerTransport());
        Level level = planned(r.rate(), r.windowNs());
        int[] windowBits = SequenceTracker.windowsFor(plan, level);
        FailedRanges[] ledger = new FailedRanges[plan.ports()];
        for (int i = 0; i < ledger.length; i++) {
            ledger[i] = new FailedRanges();
        }
        call(() -> side.beginStep(step, windowBits, ledger, r.clockOffsetNs()));
        failures = ledger;
        lastBegun = step;
        windowBegun = false;
        windowSample = null;
        stepWindowNs = r.windowNs();
        stepIntervals = 0;
        state = State.RX_STEP;
        return new Reply.Ok();
    }

    /** The level a step's rate and window stand for, when the plan has them; else the session ends. */
    private Level planned(long rate, long windowNs) throws ControlProtocolException {
        for (Level l : plan.levels()) {
            if (l.ratePerSecond() == rate && windowNs == plan.durationNs() && rate > 0) {
                return l;
            }
        }
        io.lossprobe.core.plan.SearchPlan search = plan.search();
        if (search != null && rate >= search.minRate() && rate <= search.maxRate()
            && (windowNs == plan.durationNs() || windowNs == search.shortTrialNs())) {
            return Level.of(rate);
        }
        throw new ControlProtocolException("a step at " + rate + " messages/s for " + windowNs + " ns is not in the "
            + "plan");
    }

    private Reply countIntervals(Request.CountIntervals r) throws IOException {
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

    private Reply beginWindow(Request.BeginWindow r) throws IOException {
        if (windowBegun) {
            throw new ControlProtocolException("the window of step " + lastBegun + " began already");
        }
        call(() -> side.beginWindow()); // socket drops first: the most time-sensitive
        windowSample = HostCounters.sample();
        windowBegun = true;
        return new Reply.Ok();
    }

    private Reply progress(Request.Progress r) throws IOException {
        FailedRangesCodec.decodeInto(r.failed(), failures);
        return new Reply.Received(call(() -> side.progress()));
    }

    private Reply closeStep(Request.CloseStep r) throws IOException {
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
        state = State.RECEIVING;
        HostCounters.Sample after = HostCounters.sample();
        List<Reply.FlowSummary> flows = new ArrayList<>();
        for (FlowReceiver.Summary s : receipt.flows()) {
            flows.add(SummaryCodec.encode(s));
        }
        TransportReport report = receipt.report();
        return new Reply.StepResult(flows, report.counters(), report.flows(), report.notes(),
            windowSample == null ? null : after.deltaSince(windowSample),
            windowSample == null ? null : after.cpuSince(windowSample), SummaryCodec.encode(receipt.intervals()));
    }

    private Reply late(Request.Late r) throws IOException {
        if (r.step() > lastClosed) {
            throw new ControlProtocolException("step " + r.step() + " has not closed");
        }
        ReceiveSide.Late late = call(() -> side.lateAfterClose(r.step()));
        return new Reply.LateCounts(late.first(), late.duplicates());
    }

    private Reply close(Request.Close r) {
        closeSide();
        closeSender();
        state = State.IDLE;
        return new Reply.Ok();
    }

    /** Senders towards the controller's own address: never anywhere else. */
    private Reply openSender(Request.OpenSender r) throws IOException {
        if (plan.sizes().size() > 1 || plan.search() != null || plan.intervalNs() > 0) {
            throw new ControlProtocolException("this server sends only plain levels: no sizes, search or intervals");
        }
        String name = planTransport(r.transport(), openedSenders, "senders");
        closeSender();
        sendSide = call(() -> LocalSendSide.open(transports.get(name),
            new SenderSpec(plan, peer, runId, plan.transportOptions(), dataKey())));
        lastSendBegun = -1;
        state = State.SENDING;
        return new Reply.SenderReady(sendSide.environment());
    }

    private Reply sendBegin(Request.SendBegin r) throws IOException {
        int step = nextStep(r.step(), lastSendBegun, plan.levels().size());
        Level level = plan.levels().get(step);
        long[] rates = new long[plan.ports()];
        for (int i = 0; i < rates.length; i++) {
            rates[i] = plan.flowRate(level, i); // from the checked plan, never from the message
        }
        call(() -> sendSide.beginStep(step, rates, new int[rates.length], SendFilter.NONE));
        failuresShipped = new int[plan.ports()];
        lastSendBegun = step;
        sendStarted = false;
        state = State.TX_STEP;
        return new Reply.SendReady(plan.warmupNs());
    }

    private Reply sendStart(Request.SendStart r) throws IOException {
        if (sendStarted) {
            throw new ControlProtocolException("step " + lastSendBegun + " started already");
        }
        call(() -> sendSide.start());
        sendStarted = true;
        return new Reply.Ok();
    }

    private Reply sendWindow(Request.SendWindow r) throws IOException {
        if (!sendStarted) {
            throw new ControlProtocolException("step " + lastSendBegun + " has not started");
        }
        call(() -> sendSide.beginWindow());
        return new Reply.Ok();
    }

    private Reply sendProgress(Request.SendProgress r) throws IOException {
        SendSide s = sendSide;
        boolean done = call(() -> s.awaitDone(1));
        long sent = call(s::sentProgress);
        long[] perFlow = done ? call(s::sent) : null;
        return new Reply.Sent(done, sent, perFlow, FailedRangesCodec.encodeNew(s.failures(), failuresShipped));
    }

    private Reply sendAbort(Request.SendAbort r) throws IOException {
        call(() -> sendSide.abort());
        return new Reply.Ok();
    }

    private Reply sendResult(Request.SendResult r) throws IOException {
        SendSide s = sendSide;
        if (!call(() -> s.awaitDone(1))) {
            throw new ControlProtocolException("the step is still sending");
        }
        SendSide.Outcome outcome = call(s::finish);
        long[][] counts = new long[outcome.counts().length][];
        for (int i = 0; i < counts.length; i++) {
            SendLoop.FlowSendCounts c = outcome.counts()[i];
            counts[i] = new long[] {c.scheduled(), c.sent(), c.sendFailed(), c.behind()};
        }
        Latency lag = outcome.lag();
        Map<Integer, long[]> failed = FailedRangesCodec.encodeNew(s.failures(), failuresShipped);
        state = State.SENDING;
        TransportReport report = outcome.report();
        return new Reply.SendOutcome(counts, outcome.windowNs(), outcome.failedAfterClose(), failed,
            new Reply.Lag(lag.count(), lag.meanNs(), lag.minNs(), lag.p50Ns(), lag.p90Ns(), lag.p99Ns(),
                lag.p999Ns(), lag.maxNs()), report.counters(), report.flows(), report.notes());
    }

    /**
     * One clock exchange ({@link ClockSync}): t2 as soon as the request is known to be one, t3 just before the
     * reply is written. Holds nothing between requests, so a flood is held back by TCP, not by memory here.
     */
    private Reply clock(Request.Clock r) {
        ClockSync.ServerClock c = server.clock();
        long receivedNs = c.receivedNs();
        return new Reply.ClockReply(r.seq(), receivedNs, c.replyingNs());
    }

    private void closeSender() {
        if (sendSide != null) {
            try {
                sendSide.abort();
                sendSide.close();
            } catch (Exception e) {
                server.log("session " + id + ": closing senders: " + e.getMessage());
            }
            sendSide = null;
        }
    }

    private void closeSide() {
        if (side != null) {
            try {
                side.close();
            } catch (Exception e) {
                server.log("session " + id + ": closing receivers: " + e.getMessage());
            }
            side = null;
        }
    }

    private interface Action<T> {
        T get() throws Exception;
    }

    private interface VoidAction {
        void run() throws Exception;
    }

    private static void call(VoidAction a) throws IOException {
        call(() -> {
            a.run();
            return null;
        });
    }

    /**
     * Runs engine or transport code: whatever it throws (a port in use, a transport that cannot do what the plan
     * asks) is the session's failure, reported to the controller, not the server's.
     */
    private static <T> T call(Action<T> a) throws IOException {
        try {
            return a.get();
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(rootMessage(e), e);
        }
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String m = t.getMessage();
        return m == null ? t.getClass().getSimpleName() : m.lines().findFirst().orElse(m);
    }
}
