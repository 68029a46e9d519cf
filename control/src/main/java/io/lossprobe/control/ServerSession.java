package io.lossprobe.control;

import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportOptions;
import io.lossprobe.core.wire.MessageAuth;
import java.io.IOException;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
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
 *                   |                     (punched)
 *                   |                                              (send-start, send-window, send-progress, send-abort)
 *   close: any state after PLAN -> IDLE;  clock, host-sample: any state after PLAN;  bye: any state -> DONE
 *   send-to: IDLE, once, before open-sender (run --from: the senders then send to that serve, not the controller)
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

    /**
     * While this server sends (a reverse step) or receives a step, the longest its controller may be silent: the
     * controller polls the sending or the receivers every few milliseconds, so silence this long means it is gone
     * or cut off, and this host's traffic stops with the session rather than run on to the window's end or the idle
     * timeout (and its receivers free their ports for the next run at once). Not shorter: on a path
     * the step itself saturates, the control connection's TCP retransmissions delay an exchange by seconds (2 s
     * was passed in the lab, with the sender's own egress overloaded).
     */
    static final long SENDING_SILENCE_NS = TimeUnit.SECONDS.toNanos(5);

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
    /** The run's data key: unwrapped from the plan request ({@code run --from}) or derived from the session. */
    private MessageAuth runKey;
    /**
     * {@code run --from}: the address of the serve this session's senders send to, which proved the secret to this
     * server; null: the controller's own address.
     */
    private String sendTarget;
    private long deadlineNs = Long.MAX_VALUE;
    private final Set<String> openedReceivers = new HashSet<>();
    private final Set<String> openedSenders = new HashSet<>();
    /** The open receivers, else null. */
    private SessionReceiver side;
    /** Reverse runs: the open senders, else null. */
    private SessionSender sender;

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
        on(Request.CountIntervals.class, EnumSet.of(State.RX_STEP), r -> side.countIntervals(r));
        on(Request.BeginWindow.class, EnumSet.of(State.RX_STEP), r -> side.beginWindow());
        on(Request.Progress.class, EnumSet.of(State.RX_STEP), r -> side.progress(r));
        on(Request.CloseStep.class, EnumSet.of(State.RX_STEP), this::closeStep);
        on(Request.Late.class, EnumSet.of(State.RECEIVING, State.RX_STEP), r -> side.late(r));
        on(Request.OpenSender.class, EnumSet.of(State.IDLE, State.SENDING), this::openSender);
        on(Request.Punched.class, EnumSet.of(State.SENDING), r -> sender.punched());
        on(Request.SendBegin.class, EnumSet.of(State.SENDING), this::sendBegin);
        on(Request.SendStart.class, EnumSet.of(State.TX_STEP), r -> sender.start());
        on(Request.SendWindow.class, EnumSet.of(State.TX_STEP), r -> sender.window());
        on(Request.SendProgress.class, EnumSet.of(State.TX_STEP), r -> sender.progress());
        on(Request.SendAbort.class, EnumSet.of(State.SENDING, State.TX_STEP), r -> sender.abort());
        on(Request.SendResult.class, EnumSet.of(State.TX_STEP), this::sendResult);
        on(Request.Close.class, afterPlan, this::close);
        on(Request.Clock.class, afterPlan, this::clock);
        on(Request.HostSample.class, afterPlan, r -> hostSample());
        on(Request.SendTo.class, EnumSet.of(State.IDLE), this::sendTo);
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
                Request request = Codec.request(receiveNext());
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

    /**
     * The next request, within the idle timeout, or within {@link #SENDING_SILENCE_NS} while this server's senders
     * are sending (once they are done, the controller drains its receivers without a word, for up to Tmax) or while
     * a receive step is under way (the controller polls this host's receivers from the warm-up to the drain's end,
     * so silence that long means it is gone: the session ends and the ports are free for the next run at once).
     */
    private byte[] receiveNext() throws IOException {
        long waitNs = TimeUnit.MILLISECONDS.toNanos(server.limits().idleTimeoutMs());
        boolean sending = state == State.TX_STEP && sender.sending(); // not in the drain after: silent by design
        boolean receiving = state == State.RX_STEP;
        if (sending || receiving) {
            waitNs = Math.min(waitNs, SENDING_SILENCE_NS);
        }
        try {
            return channel.receive(ControlServer.MAX_REQUEST_BYTES, System.nanoTime() + waitNs);
        } catch (FrameChannel.Silent e) {
            if (!sending && !receiving) {
                throw e;
            }
            throw new ControlProtocolException("the controller was silent for "
                + TimeUnit.NANOSECONDS.toMillis(waitNs) + " ms during a " + (sending ? "send step: sending stopped"
                : "receive step: its receivers closed"));
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
        runKey = r.dataKey() == null ? MessageAuth.derive(sessionKey, runId)
            : MessageAuth.unwrap(sessionKey, runId, r.dataKey());
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

    /** The data key of one pass (transport and message size), as the controller's engine derives it. */
    private MessageAuth dataKey(String transport, int messageSize) {
        return runKey.forPass(transport, messageSize);
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
        if (r.source() != null && plan.echo()) {
            throw new ControlProtocolException("receivers that take data from another host send no echo replies");
        }
        closeSide();
        // The controller names the sending server's address in a run --from; otherwise data comes from the controller.
        side = SessionReceiver.open(transports.get(name), plan, r.messageSize(), server.bindAddress(),
            r.source() != null ? r.source() : peer, runId, dataKey(name, r.messageSize()));
        state = State.RECEIVING;
        return side.ready();
    }

    private int nextStep(int step, int last, int steps) throws ControlProtocolException {
        if (step <= last || step >= steps) {
            throw new ControlProtocolException("step " + step + " out of order: the last begun was " + last
                + " and the plan has " + steps);
        }
        return step;
    }

    private Reply beginStep(Request.BeginStep r) throws IOException {
        Reply reply = side.beginStep(nextStep(r.step(), side.lastBegun(), plan.stepsPerTransport()), r);
        state = State.RX_STEP;
        return reply;
    }

    private Reply closeStep(Request.CloseStep r) throws IOException {
        Reply reply = side.closeStep(r);
        state = State.RECEIVING;
        return reply;
    }

    private Reply close(Request.Close r) {
        closeSide();
        closeSender();
        state = State.IDLE;
        return new Reply.Ok();
    }

    /**
     * Senders towards the controller's own address, or ({@code run --from}) towards the serve that proved the
     * secret to this server in {@link #sendTo}: never anywhere else.
     */
    private Reply openSender(Request.OpenSender r) throws IOException {
        if (plan.sizes().size() > 1 || plan.search() != null || plan.intervalNs() > 0) {
            throw new ControlProtocolException("this server sends only plain levels: no sizes, search or intervals");
        }
        String name = planTransport(r.transport(), openedSenders, "senders");
        closeSender();
        // To the controller's own receivers: they punch when asked (and must, behind a NAT: the controller's own
        // address is not the one it is seen at), and the data goes where each punch came from, on the controller's
        // address only.
        SenderSpec.Reach reach = sendTarget != null ? SenderSpec.Reach.DIRECT
            : sameHost(peer, r.address()) ? SenderSpec.Reach.PUNCHES : SenderSpec.Reach.BEHIND_NAT;
        // From the address the controller reached this server at: its receivers take data from that one only, and
        // the route's preferred source may be another (a server with several addresses, a loopback alias).
        sender = SessionSender.open(transports.get(name), plan, sendTarget != null ? sendTarget : peer, runId,
            dataKey(name, plan.messageSize()), reach, sendTarget != null ? null : channel.localAddress());
        state = State.SENDING;
        return sender.ready(peer);
    }

    private static boolean sameHost(String a, String b) {
        try {
            return java.net.InetAddress.getByName(a).equals(java.net.InetAddress.getByName(b));
        } catch (java.net.UnknownHostException e) {
            return false; // Wire.address admits only literals and names; a name that does not resolve is no match
        }
    }

    private Reply sendBegin(Request.SendBegin r) throws IOException {
        Reply reply = sender.begin(nextStep(r.step(), sender.lastBegun(), plan.levels().size()));
        state = State.TX_STEP;
        return reply;
    }

    private Reply sendResult(Request.SendResult r) throws IOException {
        Reply reply = sender.result();
        state = State.SENDING;
        return reply;
    }

    /**
     * {@code run --from}: connects to the serve at the request's address as a controller would, and keeps it as the
     * senders' target only once it proved the secret (the handshake: the serve proves first). The connection then
     * says goodbye; the data goes to the address it reached (not to the name resolved again), and leaves from the
     * address the connection left from, which the reply reports so the controller can tell the receivers there.
     */
    private Reply sendTo(Request.SendTo r) throws IOException {
        if (sendTarget != null) {
            throw new ControlProtocolException("this session's send target was set once already");
        }
        if (plan.echo()) {
            throw new ControlProtocolException("a server sends echo requests to no other host");
        }
        ControlClient toTarget;
        try {
            toTarget = ControlClient.connect(r.host(), r.port(), server.auth(), SEND_TO_TIMEOUT_MS);
        } catch (IOException e) {
            throw new ControlProtocolException("cannot send to lossprobe serve at "
                + io.lossprobe.core.plan.Addresses.hostPort(r.host(), r.port()) + ": "
                + PeerText.clean(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
        }
        String target;
        String source;
        try {
            target = toTarget.peerAddress();
            source = toTarget.localAddress();
        } finally {
            toTarget.close();
        }
        sendTarget = target;
        server.log("session " + id + " from " + peer + ": sends to " + io.lossprobe.core.plan.Addresses.hostPort(target,
            r.port()) + " (authenticated), from " + source);
        return new Reply.SendToOk(target, source);
    }

    /** How long {@link #sendTo} waits for the other serve to connect and prove the secret. */
    static final int SEND_TO_TIMEOUT_MS = 10_000;

    private Reply hostSample() {
        io.lossprobe.core.counters.HostCounters.Sample s = io.lossprobe.core.counters.HostCounters.sample();
        return new Reply.HostSample(s.counters(), s.cpuBusyJiffies(), s.cpuTotalJiffies(), s.processCpuNs(),
            s.wallNs());
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
        if (sender != null) {
            try {
                sender.close();
            } catch (Exception e) {
                server.log("session " + id + ": closing senders: " + e.getMessage());
            }
            sender = null;
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
}
