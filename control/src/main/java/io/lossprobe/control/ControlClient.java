package io.lossprobe.control;

import io.lossprobe.core.result.ClockOffset;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.ReceiveSideFactory;
import io.lossprobe.core.engine.SendSide;
import io.lossprobe.core.engine.SendSideFactory;
import io.lossprobe.core.pacing.SendFilter;
import io.lossprobe.core.pacing.SendLoop;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Cpu;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.TransportReport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The controller's end of the control channel ({@code lossprobe run --target HOST}): authenticates, negotiates
 * the plan, and gives the engine a {@link ReceiveSide} per transport whose receivers run on the server.
 */
public final class ControlClient implements AutoCloseable {
    public static final int DEFAULT_PORT = 7400;

    private final ControlChannel channel;
    private final int timeoutMs;
    private final byte[] sessionKey;

    private ControlClient(ControlChannel channel, int timeoutMs, byte[] sessionKey) {
        this.channel = channel;
        this.timeoutMs = timeoutMs;
        this.sessionKey = sessionKey;
    }

    /** The server's address as this connection reaches it. */
    public String peerAddress() {
        return channel.remoteAddress();
    }

    /** The data key of run {@code runId} in this session: the server derives the same one. */
    public io.lossprobe.core.wire.MessageAuth dataKey(int runId) {
        return io.lossprobe.core.wire.MessageAuth.derive(sessionKey, runId);
    }

    /** Connects and authenticates; the server must prove it knows the secret too. */
    public static ControlClient connect(String host, int port, Auth auth, int timeoutMs) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), timeoutMs);
        } catch (IOException e) {
            socket.close();
            throw new IOException("cannot reach lossprobe serve at " + host + ":" + port + ": " + e.getMessage(), e);
        }
        ControlChannel channel = new ControlChannel(socket, ControlChannel.DEFAULT_MAX_MESSAGE_BYTES);
        try {
            channel.send(ControlChannel.message("hello"));
            String serverNonce = new Fields(channel.receive("challenge", timeoutMs)).string("nonce", 128);
            String clientNonce = Auth.nonce();
            ObjectNode answer = ControlChannel.message("auth");
            answer.put("nonce", clientNonce);
            answer.put("mac", auth.proof("client", serverNonce, clientNonce));
            channel.send(answer);
            String serverMac = new Fields(channel.receive("welcome", timeoutMs)).string("mac", 128);
            if (!auth.verify(auth.proof("server", clientNonce, serverNonce), serverMac)) {
                throw new ControlProtocolException("the server could not prove it knows the secret");
            }
            return new ControlClient(channel, timeoutMs, auth.sessionKey(clientNonce, serverNonce));
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** Sends the plan; returns the address the server's receivers are bound to. */
    public String negotiate(Plan plan, int runId, Map<String, String> options) throws IOException {
        ObjectNode msg = ControlChannel.message("plan");
        msg.put("runId", runId);
        ObjectNode wirePlan = ControlChannel.mapper().valueToTree(plan);
        // Options travel filtered in "options" below; an older server refuses a plan with a field it does not know.
        wirePlan.remove("transportOptions");
        msg.set("plan", wirePlan);
        ObjectNode opts = msg.putObject("options");
        options.forEach((k, v) -> {
            if (ControlServer.REMOTE_OPTIONS.contains(k)) {
                opts.put(k, v);
            }
        });
        return new Fields(request(msg, "plan-ok")).string("bindAddress", 256);
    }

    /** Clock exchanges made once, before the first estimate, and discarded. */
    static final int WARM_UP_CLOCK_EXCHANGES = 200;
    private boolean clockWarmed;

    /**
     * Estimates the server's clock offset from {@code exchanges} (1..256) back-to-back
     * {@code clock} exchanges, keeping the least-delayed one (see {@link ClockSync}). Takes a few round trips of
     * the control connection; call it between steps, where no data traffic queues in front of it.
     */
    public ClockOffset clockOffset(int exchanges) throws IOException {
        if (!clockWarmed) {
            // Warms both ends' exchange path first: run interpreted, its round trip (hence the estimate's
            // uncertainty) is several times larger (measured on loopback: ~100 us cold, ~10 us warm).
            clockWarmed = true;
            for (int done = 0; done < WARM_UP_CLOCK_EXCHANGES; done += ClockSync.MAX_EXCHANGES) {
                clockOffset(Math.min(ClockSync.MAX_EXCHANGES, WARM_UP_CLOCK_EXCHANGES - done));
            }
        }
        return ClockSync.estimate(exchanges, this::clockExchange);
    }

    /** {@link #clockOffset(int)} with the default 16 exchanges. */
    public ClockOffset clockOffset() throws IOException {
        return clockOffset(ClockSync.DEFAULT_EXCHANGES);
    }

    /** One exchange; synchronized like {@link #request}, so no other request runs between t1 and t4. */
    private synchronized ClockSync.Stamps clockExchange(int seq) throws IOException {
        ObjectNode msg = ControlChannel.message("clock");
        msg.put("seq", seq);
        long t1 = System.nanoTime();
        channel.send(msg);
        JsonNode reply = channel.receive("clock", timeoutMs);
        long t4 = System.nanoTime();
        Fields f = new Fields(reply);
        if (f.integer("seq", 0, Integer.MAX_VALUE) != seq) {
            throw new ControlProtocolException("clock reply for another request");
        }
        return new ClockSync.Stamps(t1, f.longValue("t2", Long.MIN_VALUE, Long.MAX_VALUE),
            f.longValue("t3", Long.MIN_VALUE, Long.MAX_VALUE), t4);
    }

    synchronized JsonNode request(ObjectNode msg, String expected) throws IOException {
        channel.send(msg);
        return channel.receive(expected, timeoutMs);
    }

    /** Receive sides on the server, one per transport in the engine's order. */
    public ReceiveSideFactory receiveSides() {
        return new ReceiveSideFactory() {
            @Override
            public ReceiveSide open(io.lossprobe.core.transport.Transport transport, Plan plan, int runId,
                                    io.lossprobe.core.wire.MessageAuth auth, Map<String, String> options)
                throws IOException {
                return new Remote(transport.name(), plan.ports());
            }

            @Override
            public io.lossprobe.core.wire.MessageAuth dataKey(int runId) {
                return ControlClient.this.dataKey(runId);
            }
        };
    }

    /** Drops the connection without a goodbye, as a controller that crashes or loses its network would. */
    public void abort() {
        channel.close();
    }

    /** Senders on the server, sending to this controller's address (a {@code --reverse} run). */
    public SendSideFactory sendSides() {
        return new SendSideFactory() {
            @Override
            public SendSide open(io.lossprobe.core.transport.Transport transport, Plan plan, int runId,
                                 io.lossprobe.core.wire.MessageAuth auth, Map<String, String> options)
                throws IOException {
                return new RemoteSender(transport.name(), plan.ports());
            }

            @Override
            public io.lossprobe.core.wire.MessageAuth dataKey(int runId) {
                return ControlClient.this.dataKey(runId);
            }
        };
    }

    @Override
    public void close() {
        try {
            channel.send(ControlChannel.message("bye"));
        } catch (IOException e) {
            // Closing anyway.
        }
        channel.close();
    }

    /** One transport's senders on the server. */
    private final class RemoteSender implements SendSide {
        private static final long POLL_NS = 5_000_000;
        private final int flows;
        private final Map<String, Long> environment = new HashMap<>();
        private FailedRanges[] failures;
        private long warmupNs;
        private long sent;
        private long[] sentPerFlow;
        private boolean closed;

        RemoteSender(String transport, int flows) throws IOException {
            this.flows = flows;
            this.failures = freshLedger(flows);
            ObjectNode open = ControlChannel.message("open-sender");
            open.put("transport", transport);
            request(open, "sender-ready").path("environment").fields()
                .forEachRemaining(e -> environment.put("remote." + e.getKey(), e.getValue().asLong()));
        }

        @Override
        public Map<String, Long> environment() {
            return environment;
        }

        @Override
        public void beginStep(int step, long[] flowRates, int[] windowBits, SendFilter filter) throws IOException {
            if (filter != SendFilter.NONE) {
                throw new IllegalArgumentException("send filters cannot run on a remote sender");
            }
            failures = freshLedger(flows);
            sent = 0;
            sentPerFlow = null;
            ObjectNode msg = ControlChannel.message("send-begin");
            msg.put("step", step);
            warmupNs = new Fields(request(msg, "send-ready")).longValue("warmupNs", 0, Long.MAX_VALUE);
        }

        @Override
        public FailedRanges[] failures() {
            return failures;
        }

        @Override
        public ClockOffset clockOffset() throws IOException {
            return ControlClient.this.clockOffset();
        }

        /**
         * The window begins warm-up after the server starts; seen from here that is at most one control round trip
         * off, which the counters' skew includes.
         */
        @Override
        public long start() throws IOException {
            long before = System.nanoTime();
            request(ControlChannel.message("send-start"), "ok");
            return before + warmupNs;
        }

        @Override
        public void beginWindow() throws IOException {
            request(ControlChannel.message("send-window"), "ok");
        }

        @Override
        public boolean awaitDone(long timeoutNs) throws IOException {
            long deadline = System.nanoTime() + timeoutNs;
            while (true) {
                JsonNode p = request(ControlChannel.message("send-progress"), "send-progress");
                sent = p.path("sent").asLong();
                FailedRangesCodec.decodeInto(p, "failed", failures);
                if (p.path("done").asBoolean()) {
                    sentPerFlow = new Fields(p).longs("sentPerFlow", flows, 0, Long.MAX_VALUE);
                    return true;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(Math.min(left, POLL_NS));
            }
        }

        @Override
        public long sentProgress() {
            return sent;
        }

        @Override
        public long[] sent() {
            return sentPerFlow == null ? new long[flows] : sentPerFlow.clone();
        }

        @Override
        public void abort() throws IOException {
            request(ControlChannel.message("send-abort"), "ok");
        }

        @Override
        public Outcome finish() throws IOException {
            JsonNode r = request(ControlChannel.message("send-result"), "send-result");
            FailedRangesCodec.decodeInto(r, "failed", failures);
            JsonNode counts = r.path("counts");
            if (!counts.isArray() || counts.size() != flows) {
                throw new ControlProtocolException("send result without " + flows + " flows");
            }
            SendLoop.FlowSendCounts[] out = new SendLoop.FlowSendCounts[flows];
            for (int i = 0; i < flows; i++) {
                JsonNode c = counts.get(i);
                out[i] = new SendLoop.FlowSendCounts(c.path(0).asLong(), c.path(1).asLong(), c.path(2).asLong(),
                    c.path(3).asLong());
            }
            Latency lag;
            try {
                lag = ControlChannel.mapper().treeToValue(r.path("lag"), Latency.class);
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new ControlProtocolException("bad lag: " + e.getOriginalMessage());
            }
            Map<Integer, Map<String, Long>> perFlow = new HashMap<>();
            r.path("flowCounters").fields().forEachRemaining(e ->
                perFlow.put(Integer.parseInt(e.getKey()), longs(e.getValue())));
            return new Outcome(out, r.path("windowNs").asLong(), lag,
                new TransportReport(longs(r.path("counters")), perFlow), r.path("failedAfterClose").asLong());
        }

        @Override
        public void close() throws IOException {
            if (!closed) {
                closed = true;
                request(ControlChannel.message("close"), "ok");
            }
        }
    }

    private static FailedRanges[] freshLedger(int flows) {
        FailedRanges[] out = new FailedRanges[flows];
        for (int i = 0; i < flows; i++) {
            out[i] = new FailedRanges();
        }
        return out;
    }

    private static Map<String, Long> longs(JsonNode node) {
        Map<String, Long> out = new HashMap<>();
        node.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asLong()));
        return out;
    }

    /** One transport's receivers on the server. */
    private final class Remote implements ReceiveSide {
        private final int flows;
        private final Map<String, Long> environment = new HashMap<>();
        private final Map<Integer, Late> lateSeen = new HashMap<>();
        /** The sender's failure ledger of the open step, and how much of each flow's was shipped to the server. */
        private FailedRanges[] failures;
        private int[] shipped;
        private boolean closed;

        Remote(String transport, int flows) throws IOException {
            this.flows = flows;
            ObjectNode open = ControlChannel.message("open");
            open.put("transport", transport);
            JsonNode ready = request(open, "ready");
            ready.path("environment").fields().forEachRemaining(e -> environment.put("remote." + e.getKey(),
                e.getValue().asLong()));
        }

        @Override
        public Map<String, Long> environment() {
            return environment;
        }

        @Override
        public void beginStep(int step, int[] windowBits, FailedRanges[] failures) throws IOException {
            beginStep(step, windowBits, failures, 0);
        }

        @Override
        public void beginStep(int step, int[] windowBits, FailedRanges[] failures, long clockOffsetNs)
            throws IOException {
            this.failures = failures == null ? freshLedger(flows) : failures;
            this.shipped = new int[flows];
            ObjectNode msg = ControlChannel.message("begin-step");
            msg.put("clockOffsetNs", clockOffsetNs);
            msg.put("step", step);
            ArrayNode bits = msg.putArray("windowBits");
            for (int b : windowBits) {
                bits.add(b);
            }
            request(msg, "ok");
        }

        @Override
        public void beginWindow() throws IOException {
            request(ControlChannel.message("begin-window"), "ok");
        }

        @Override
        public ClockOffset clockOffset() throws IOException {
            return ControlClient.this.clockOffset();
        }

        /** Also ships the failed ranges recorded since the last call, so the server's trackers skip them in time. */
        @Override
        public long[] progress() throws IOException {
            ObjectNode msg = ControlChannel.message("progress");
            FailedRangesCodec.encodeNew(msg, "failed", failures, shipped);
            return new Fields(request(msg, "progress")).longs("received", flows, 0, Long.MAX_VALUE);
        }

        @Override
        public Receipt closeStep(int step, long[] wireEnd) throws IOException {
            ObjectNode msg = ControlChannel.message("close-step");
            msg.put("step", step);
            ArrayNode arr = msg.putArray("wireEnd");
            for (long s : wireEnd) {
                arr.add(s);
            }
            FailedRangesCodec.encodeNew(msg, "failed", failures, shipped);
            JsonNode reply = request(msg, "step-result");
            JsonNode flowNodes = reply.path("flows");
            if (!flowNodes.isArray() || flowNodes.size() != flows) {
                throw new ControlProtocolException("step result without " + flows + " flows");
            }
            FlowReceiver.Summary[] summaries = new FlowReceiver.Summary[flows];
            for (int i = 0; i < flows; i++) {
                summaries[i] = SummaryCodec.decode(flowNodes.get(i));
            }
            Map<Integer, Map<String, Long>> perFlow = new HashMap<>();
            Iterator<Map.Entry<String, JsonNode>> it = reply.path("flowCounters").fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                perFlow.put(Integer.parseInt(e.getKey()), longs(e.getValue()));
            }
            Map<String, Long> host = reply.has("hostCounters") ? longs(reply.get("hostCounters")) : Map.of();
            Cpu cpu = reply.has("cpu") ? new Cpu(reply.get("cpu").path("processPercent").asDouble(),
                reply.get("cpu").path("hostPercent").asDouble()) : null;
            return new Receipt(summaries, new TransportReport(longs(reply.path("counters")), perFlow), host, cpu);
        }

        @Override
        public Late lateAfterClose(int step) throws IOException {
            if (closed) {
                return lateSeen.getOrDefault(step, new Late(new long[flows], new long[flows]));
            }
            ObjectNode msg = ControlChannel.message("late");
            msg.put("step", step);
            Fields reply = new Fields(request(msg, "late"));
            Late late = new Late(reply.longs("first", flows, 0, Long.MAX_VALUE),
                reply.longs("duplicates", flows, 0, Long.MAX_VALUE));
            lateSeen.put(step, late);
            return late;
        }

        @Override
        public ReceiverEndpoint localEndpoint() {
            return null;
        }

        @Override
        public void close() throws IOException {
            if (!closed) {
                closed = true;
                request(ControlChannel.message("close"), "ok");
            }
        }
    }
}
