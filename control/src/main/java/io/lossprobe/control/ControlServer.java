package io.lossprobe.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.engine.LocalReceiveSide;
import io.lossprobe.core.engine.LocalSendSide;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.SendSide;
import io.lossprobe.core.pacing.SendFilter;
import io.lossprobe.core.pacing.SendLoop;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.wire.MessageAuth;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code lossprobe serve}: the receiving host. Each authenticated controller gets a session that binds receivers
 * on the ports of its plan, runs its steps' accounting on command and returns per-flow receive results with this
 * host's counters. Sessions are independent; one that misbehaves or vanishes is closed and its ports freed.
 * The server sends data traffic only in a {@code --reverse} session, and then only to that authenticated
 * controller's own address (the peer of the control connection), never to an address a message names.
 */
public final class ControlServer implements AutoCloseable {
    /** Transport options a controller may set on the server; anything else (e.g. file paths) is ignored. */
    static final Set<String> REMOTE_OPTIONS = Set.of("udp.io", "rcvbuf", "tcp.io", "tcp.nodelay", "aeron.reliable",
        "aeron.termLength", "aeron.mtu");

    private final String bindAddress;
    private final Auth auth;
    private final ServerLimits limits;
    private final Map<String, Transport> transports;
    private final PrintWriter log;
    private final ServerSocket serverSocket;
    private final Set<Session> sessions = ConcurrentHashMap.newKeySet();
    private final AtomicInteger sessionIds = new AtomicInteger();
    private final Thread acceptor;
    private volatile boolean closed;
    private volatile ClockSync.ServerClock serverClock = ClockSync.ServerClock.SYSTEM;

    public ControlServer(String bindAddress, int port, Auth auth, ServerLimits limits,
                         Map<String, Transport> transports, PrintWriter log) throws IOException {
        this.bindAddress = bindAddress;
        this.auth = auth;
        this.limits = limits;
        this.transports = Map.copyOf(transports);
        this.log = log;
        this.serverSocket = new ServerSocket();
        serverSocket.setReuseAddress(true);
        serverSocket.bind(new InetSocketAddress(InetAddress.getByName(bindAddress), port), 16);
        this.acceptor = new Thread(this::acceptLoop, "lossprobe-serve");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Test seam: the clock that stamps {@code clock} replies (a shifted, wrapping or skewed one). */
    void useClock(ClockSync.ServerClock clock) {
        this.serverClock = clock;
    }

    public int port() {
        return serverSocket.getLocalPort();
    }

    public int activeSessions() {
        return sessions.size();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket socket;
            try {
                socket = serverSocket.accept();
            } catch (IOException e) {
                if (!closed) {
                    log("accept failed: " + e.getMessage());
                }
                continue;
            }
            try {
                ControlChannel channel = new ControlChannel(socket, ControlChannel.DEFAULT_MAX_MESSAGE_BYTES);
                if (sessions.size() >= limits.maxSessions()) {
                    refuse(channel, "server busy: " + limits.maxSessions() + " sessions already");
                    continue;
                }
                Session session = new Session(sessionIds.incrementAndGet(), channel);
                sessions.add(session);
                Thread t = new Thread(session, "lossprobe-session-" + session.id);
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                closeQuietly(socket);
            }
        }
    }

    private void refuse(ControlChannel channel, String why) {
        try {
            ObjectNode error = ControlChannel.message("error");
            error.put("message", why);
            channel.send(error);
        } catch (IOException e) {
            // The peer is gone already.
        }
        channel.close();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // Nothing to do.
        }
    }

    private void log(String line) {
        if (log != null) {
            synchronized (log) {
                log.println("lossprobe serve: " + line);
                log.flush();
            }
        }
    }

    /** True when [base, base + ports) overlaps a port range another session holds. */
    private synchronized boolean reserve(Session who, int base, int ports) {
        for (Session s : sessions) {
            if (s != who && s.ports > 0 && base < s.basePort + s.ports && s.basePort < base + ports) {
                return false;
            }
        }
        who.basePort = base;
        who.ports = ports;
        return true;
    }

    @Override
    public void close() {
        closed = true;
        try {
            serverSocket.close();
        } catch (IOException e) {
            // Closing anyway.
        }
        for (Session s : sessions) {
            s.channel.close();
        }
    }

    /** One controller's session: handshake, plan, then step commands until bye or failure. */
    private final class Session implements Runnable {
        final int id;
        final ControlChannel channel;
        volatile int basePort;
        volatile int ports;
        private Plan plan;
        private int runId;
        private Map<String, String> options = Map.of();
        private ReceiveSide side;
        /** The open step's failure ledger as the controller ships it: the receivers skip what it records. */
        private FailedRanges[] failures;
        private SendSide sendSide;
        /** Reverse runs: how much of each flow's failure ledger was shipped to the controller. */
        private int[] failuresShipped;
        private HostCounters.Sample windowSample;
        /** Both sides' secret for this session, from the handshake; the run's data key comes from it. */
        private byte[] sessionKey;

        Session(int id, ControlChannel channel) {
            this.id = id;
            this.channel = channel;
        }

        @Override
        public void run() {
            String peer = channel.remoteAddress();
            try {
                handshake();
                negotiate();
                io.lossprobe.core.engine.RunEngine.prewarm(); // counter readers' first use is slow: not mid-step
                log("session " + id + " from " + peer + ": " + plan.ports() + " ports from " + plan.basePort()
                    + ", " + plan.transports());
                serve();
                log("session " + id + " finished");
            } catch (IOException | RuntimeException e) {
                log("session " + id + " from " + peer + " closed: " + e.getMessage());
                refuse(channel, e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
            } finally {
                closeSide();
                closeSender();
                sessions.remove(this);
                channel.close();
            }
        }

        private void handshake() throws IOException {
            channel.receive("hello", limits.handshakeTimeoutMs());
            String serverNonce = Auth.nonce();
            ObjectNode challenge = ControlChannel.message("challenge");
            challenge.put("nonce", serverNonce);
            channel.send(challenge);
            Fields answer = new Fields(channel.receive("auth", limits.handshakeTimeoutMs()));
            String clientNonce = answer.string("nonce", 128);
            String mac = answer.string("mac", 128);
            if (clientNonce.length() < 16 || !auth.verify(auth.proof("client", serverNonce, clientNonce), mac)) {
                throw new ControlProtocolException("authentication failed");
            }
            sessionKey = auth.sessionKey(clientNonce, serverNonce);
            ObjectNode welcome = ControlChannel.message("welcome");
            welcome.put("mac", auth.proof("server", clientNonce, serverNonce));
            welcome.set("limits", ControlChannel.mapper().valueToTree(limits));
            channel.send(welcome);
        }

        private void negotiate() throws IOException {
            JsonNode msg = channel.receive("plan", limits.idleTimeoutMs());
            Fields f = new Fields(msg);
            runId = (int) f.longValue("runId", Integer.MIN_VALUE, Integer.MAX_VALUE);
            Plan requested;
            try {
                requested = ControlChannel.mapper().treeToValue(f.object("plan"), Plan.class);
            } catch (com.fasterxml.jackson.core.JsonProcessingException | IllegalArgumentException e) {
                throw new ControlProtocolException("bad plan: " + rootMessage(e));
            }
            String why = limits.refuse(requested);
            if (why != null) {
                throw new ControlProtocolException(why);
            }
            for (String t : requested.transports()) {
                if (!transports.containsKey(t)) {
                    throw new ControlProtocolException("this server has no transport '" + t + "'");
                }
            }
            if (!reserve(this, requested.basePort(), requested.ports())) {
                throw new ControlProtocolException("ports " + requested.basePort() + "-"
                    + (requested.basePort() + requested.ports() - 1) + " are in use by another session");
            }
            plan = requested.withBindAddress(bindAddress);
            Map<String, String> accepted = new HashMap<>();
            JsonNode opts = msg.path("options");
            if (opts.isObject()) {
                opts.fields().forEachRemaining(e -> {
                    if (REMOTE_OPTIONS.contains(e.getKey()) && e.getValue().isTextual()
                        && e.getValue().asText().length() < 64) {
                        accepted.put(e.getKey(), e.getValue().asText());
                    }
                });
            }
            options = accepted;
            plan = plan.withTransportOptions(accepted); // never the controller's copy in the plan
            ObjectNode ok = ControlChannel.message("plan-ok");
            ok.put("bindAddress", bindAddress);
            channel.send(ok);
        }

        private void serve() throws IOException {
            while (true) {
                JsonNode msg = channel.receive(null, limits.idleTimeoutMs());
                Fields f = new Fields(msg);
                String type = f.string("type", 64);
                switch (type) {
                    case "open" -> open(f.string("transport", 32));
                    case "begin-step" -> {
                        int step = stepOf(f);
                        long[] bits = f.longs("windowBits", plan.ports(), 64, 1 << 22);
                        int[] windowBits = new int[bits.length];
                        for (int i = 0; i < bits.length; i++) {
                            if (Long.bitCount(bits[i]) != 1) {
                                throw new ControlProtocolException("windowBits must be powers of two");
                            }
                            windowBits[i] = (int) bits[i];
                        }
                        failures = new FailedRanges[plan.ports()];
                        for (int i = 0; i < failures.length; i++) {
                            failures[i] = new FailedRanges();
                        }
                        FailedRanges[] ledger = failures;
                        // The controller's estimate of this host's clock minus its own: delays become one-way.
                        long offset = msg.has("clockOffsetNs")
                            ? f.longValue("clockOffsetNs", Long.MIN_VALUE, Long.MAX_VALUE) : 0;
                        call(() -> requireSide().beginStep(step, windowBits, ledger, offset));
                        channel.send(ControlChannel.message("ok"));
                    }
                    case "begin-window" -> {
                        call(() -> requireSide().beginWindow()); // socket drops first: the most time-sensitive
                        windowSample = HostCounters.sample();
                        channel.send(ControlChannel.message("ok"));
                    }
                    case "progress" -> {
                        FailedRangesCodec.decodeInto(msg, "failed", requireLedger());
                        ObjectNode reply = ControlChannel.message("progress");
                        long[] received = callValue(() -> requireSide().progress());
                        ArrayNode arr = reply.putArray("received");
                        for (long r : received) {
                            arr.add(r);
                        }
                        channel.send(reply);
                    }
                    case "close-step" -> {
                        FailedRangesCodec.decodeInto(msg, "failed", requireLedger());
                        closeStep(stepOf(f), f.longs("wireEnd", plan.ports(), 0, Long.MAX_VALUE));
                    }
                    case "late" -> {
                        int step = stepOf(f);
                        ReceiveSide.Late late = callValue(() -> requireSide().lateAfterClose(step));
                        ObjectNode reply = ControlChannel.message("late");
                        ArrayNode first = reply.putArray("first");
                        ArrayNode duplicates = reply.putArray("duplicates");
                        for (int i = 0; i < late.first().length; i++) {
                            first.add(late.first()[i]);
                            duplicates.add(late.duplicates()[i]);
                        }
                        channel.send(reply);
                    }
                    case "close" -> {
                        closeSide();
                        closeSender();
                        channel.send(ControlChannel.message("ok"));
                    }
                    case "open-sender" -> openSender(f.string("transport", 32));
                    case "send-begin" -> {
                        int step = stepOf(f);
                        Level level = plan.levels().get(step);
                        long[] rates = new long[plan.ports()];
                        for (int i = 0; i < rates.length; i++) {
                            rates[i] = plan.flowRate(level, i); // from the checked plan, never from the message
                        }
                        SendSide s = requireSender();
                        call(() -> s.beginStep(step, rates, new int[rates.length], SendFilter.NONE));
                        failuresShipped = new int[plan.ports()];
                        ObjectNode ready = ControlChannel.message("send-ready");
                        ready.put("warmupNs", plan.warmupNs());
                        channel.send(ready);
                    }
                    case "send-start" -> {
                        requireStepBegun();
                        call(() -> requireSender().start());
                        channel.send(ControlChannel.message("ok"));
                    }
                    case "send-window" -> {
                        requireStepBegun();
                        call(() -> requireSender().beginWindow());
                        channel.send(ControlChannel.message("ok"));
                    }
                    case "send-progress" -> {
                        requireStepBegun();
                        SendSide s = requireSender();
                        ObjectNode reply = ControlChannel.message("send-progress");
                        boolean done = callValue(() -> s.awaitDone(1));
                        reply.put("done", done);
                        reply.put("sent", callValue(s::sentProgress));
                        if (done) {
                            ArrayNode perFlow = reply.putArray("sentPerFlow");
                            for (long v : callValue(s::sent)) {
                                perFlow.add(v);
                            }
                        }
                        FailedRangesCodec.encodeNew(reply, "failed", s.failures(), failuresShipped);
                        channel.send(reply);
                    }
                    case "send-abort" -> {
                        call(() -> requireSender().abort());
                        channel.send(ControlChannel.message("ok"));
                    }
                    case "send-result" -> sendResult();
                    case "clock" -> answerClock(f);
                    case "bye" -> {
                        return;
                    }
                    default -> throw new ControlProtocolException("unknown message type '" + type + "'");
                }
            }
        }

        /**
         * One clock exchange ({@link ClockSync}): t2 as soon as the request is known to be one, t3 just before the
         * reply is written. Holds nothing between requests, so a flood is held back by TCP, not by memory here.
         */
        private void answerClock(Fields f) throws IOException {
            ClockSync.ServerClock c = serverClock;
            long receivedNs = c.receivedNs();
            int seq = f.integer("seq", 0, Integer.MAX_VALUE);
            ObjectNode reply = ControlChannel.message("clock");
            reply.put("seq", seq);
            reply.put("t2", receivedNs);
            reply.put("t3", c.replyingNs());
            channel.send(reply);
        }

        private int stepOf(Fields f) throws ControlProtocolException {
            return f.integer("step", 0, plan.levels().size() - 1);
        }

        private void open(String name) throws IOException {
            if (!plan.transports().contains(name)) {
                throw new ControlProtocolException("transport '" + name + "' is not in the plan");
            }
            closeSide();
            FlowReceiver[] flows = LocalReceiveSide.newFlows(plan.ports(), runId, plan.messageSize(),
                plan.levels().size(), MessageAuth.derive(sessionKey, runId));
            // Data is taken only from the controller's address, and echo replies go back to it, nowhere else.
            String peer = channel.remoteAddress();
            side = callValue(() -> LocalReceiveSide.open(transports.get(name),
                new ReceiverSpec(plan, bindAddress, flows, options, plan.echo() ? peer : null, peer)));
            ObjectNode ready = ControlChannel.message("ready");
            ready.set("environment", ControlChannel.mapper().valueToTree(side.environment()));
            channel.send(ready);
        }

        /** Senders towards the controller's own address: never anywhere else. */
        private void openSender(String name) throws IOException {
            if (!plan.transports().contains(name)) {
                throw new ControlProtocolException("transport '" + name + "' is not in the plan");
            }
            closeSender();
            String peer = channel.remoteAddress();
            sendSide = callValue(() -> LocalSendSide.open(transports.get(name),
                new SenderSpec(plan, peer, runId, options, MessageAuth.derive(sessionKey, runId))));
            ObjectNode ready = ControlChannel.message("sender-ready");
            ready.set("environment", ControlChannel.mapper().valueToTree(sendSide.environment()));
            channel.send(ready);
        }

        private void sendResult() throws IOException {
            requireStepBegun();
            SendSide s = requireSender();
            if (!callValue(() -> s.awaitDone(1))) {
                throw new ControlProtocolException("the step is still sending");
            }
            SendSide.Outcome outcome = callValue(s::finish);
            ObjectNode reply = ControlChannel.message("send-result");
            ArrayNode counts = reply.putArray("counts");
            for (SendLoop.FlowSendCounts c : outcome.counts()) {
                counts.addArray().add(c.scheduled()).add(c.sent()).add(c.sendFailed()).add(c.behind());
            }
            reply.put("windowNs", outcome.windowNs());
            reply.put("failedAfterClose", outcome.failedAfterClose());
            FailedRangesCodec.encodeNew(reply, "failed", s.failures(), failuresShipped);
            failuresShipped = null;
            reply.set("lag", ControlChannel.mapper().valueToTree(outcome.lag()));
            reply.set("counters", ControlChannel.mapper().valueToTree(outcome.report().counters()));
            ObjectNode perFlow = reply.putObject("flowCounters");
            outcome.report().flows().forEach((flow, counters) ->
                perFlow.set(Integer.toString(flow), ControlChannel.mapper().valueToTree(counters)));
            channel.send(reply);
        }

        private FailedRanges[] requireLedger() throws ControlProtocolException {
            if (failures == null) {
                throw new ControlProtocolException("no step is open: send 'begin-step' first");
            }
            return failures;
        }

        private void requireStepBegun() throws ControlProtocolException {
            if (failuresShipped == null) {
                throw new ControlProtocolException("no step is prepared: send 'send-begin' first");
            }
        }

        private SendSide requireSender() throws ControlProtocolException {
            if (sendSide == null) {
                throw new ControlProtocolException("no sender is open: send 'open-sender' first");
            }
            return sendSide;
        }

        private void closeSender() {
            if (sendSide != null) {
                try {
                    sendSide.abort();
                    sendSide.close();
                } catch (Exception e) {
                    log("session " + id + ": closing senders: " + e.getMessage());
                }
                sendSide = null;
            }
        }

        private void closeStep(int step, long[] wireEnd) throws IOException {
            ReceiveSide.Receipt receipt = callValue(() -> requireSide().closeStep(step, wireEnd));
            failures = null;
            HostCounters.Sample after = HostCounters.sample();
            ObjectNode reply = ControlChannel.message("step-result");
            ArrayNode flows = reply.putArray("flows");
            for (FlowReceiver.Summary s : receipt.flows()) {
                flows.add(SummaryCodec.encode(s));
            }
            reply.set("counters", ControlChannel.mapper().valueToTree(receipt.report().counters()));
            ObjectNode perFlow = reply.putObject("flowCounters");
            receipt.report().flows().forEach((flow, counters) ->
                perFlow.set(Integer.toString(flow), ControlChannel.mapper().valueToTree(counters)));
            if (windowSample != null) {
                reply.set("hostCounters", ControlChannel.mapper().valueToTree(after.deltaSince(windowSample)));
                reply.set("cpu", ControlChannel.mapper().valueToTree(after.cpuSince(windowSample)));
            }
            channel.send(reply);
        }

        private ReceiveSide requireSide() throws ControlProtocolException {
            if (side == null) {
                throw new ControlProtocolException("no transport is open: send 'open' first");
            }
            return side;
        }

        private void closeSide() {
            if (side != null) {
                try {
                    side.close();
                } catch (Exception e) {
                    log("session " + id + ": closing receivers: " + e.getMessage());
                }
                side = null;
            }
        }
    }

    private interface Action {
        void run() throws Exception;
    }

    private interface ValueAction<T> {
        T get() throws Exception;
    }

    private static void call(Action a) throws IOException {
        callValue(() -> {
            a.run();
            return null;
        });
    }

    private static <T> T callValue(ValueAction<T> a) throws IOException {
        try {
            return a.get();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e.getMessage(), e);
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
