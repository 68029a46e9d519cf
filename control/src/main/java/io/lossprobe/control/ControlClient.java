package io.lossprobe.control;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.ReceiveSideFactory;
import io.lossprobe.core.engine.SendSide;
import io.lossprobe.core.engine.SendSideFactory;
import io.lossprobe.core.plan.Addresses;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.ClockOffset;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportOptions;
import io.lossprobe.core.transport.Transports;
import io.lossprobe.core.wire.MessageAuth;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The controller's end of the control channel ({@code lossprobe run --target HOST}): checks the server's proof
 * before giving its own, negotiates the plan, and gives the engine a {@link ReceiveSide} (or, reversed, a
 * {@link SendSide}) per transport whose receivers (senders) run on the server. Every frame after the handshake is
 * MACed both ways; one that fails its check ends the run with a clear error.
 */
public final class ControlClient implements AutoCloseable {
    public static final int DEFAULT_PORT = 7400;
    /** Largest frame from the server: a step result for 4,096 flows fits with room to spare. */
    static final int MAX_REPLY_BYTES = 8 << 20;
    /** Write timeout on the control connection: a server that stops reading ends the run, not hangs it. */
    static final int WRITE_TIMEOUT_MS = 10_000;

    private final FrameChannel channel;
    private final int timeoutMs;
    private final byte[] sessionKey;
    private final ServerLimits serverLimits;
    /** The run key the controller chose and gave this session wrapped ({@code run --from}); null: derived. */
    private volatile MessageAuth sharedKey;

    private ControlClient(FrameChannel channel, int timeoutMs, byte[] sessionKey, ServerLimits serverLimits) {
        this.channel = channel;
        this.timeoutMs = timeoutMs;
        this.sessionKey = sessionKey;
        this.serverLimits = serverLimits;
    }

    /** The server's address as this connection reaches it. */
    public String peerAddress() {
        return channel.remoteAddress();
    }

    /** This end's address on the control connection (where unbound traffic to the server leaves from). */
    public String localAddress() {
        return channel.localAddress();
    }

    /** What the server accepts, as it said when it admitted this session. */
    public ServerLimits serverLimits() {
        return serverLimits;
    }

    /** The data key of run {@code runId} in this session: the server derives the same one. */
    public MessageAuth dataKey(int runId) {
        MessageAuth shared = sharedKey;
        return shared != null ? shared : MessageAuth.derive(sessionKey, runId);
    }

    /**
     * Connects and authenticates within {@code timeoutMs}: the server must prove it knows the secret before this
     * side proves anything.
     */
    public static ControlClient connect(String host, int port, Auth auth, int timeoutMs) throws IOException {
        HandshakeWarmup.run(auth);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        Socket socket = newSocket();
        try {
            socket.connect(new InetSocketAddress(host, port), timeoutMs);
        } catch (IOException e) {
            socket.close();
            throw new IOException("cannot reach lossprobe serve at " + Addresses.hostPort(host, port) + ": "
                + e.getMessage(), e);
        }
        FrameChannel channel = new FrameChannel(socket, WRITE_TIMEOUT_MS);
        try {
            String clientNonce = Auth.nonce();
            channel.send(Codec.encode(new Request.Hello(Codec.VERSION, clientNonce)));
            Reply first = handshakeReply(channel.receive(ControlServer.PRE_AUTH_MAX_BYTES, deadline));
            if (!(first instanceof Reply.Challenge challenge)) {
                throw new ControlProtocolException("expected 'challenge', got '" + Codec.typeOf(first) + "'");
            }
            if (!Auth.verify(auth.serverProof(clientNonce, challenge.nonce()), challenge.proof())) {
                throw new ControlProtocolException("the server at " + Addresses.hostPort(host, port)
                    + " could not prove it knows the secret (another secret there, or not a lossprobe serve); "
                    + "nothing was sent to it");
            }
            channel.send(Codec.encode(new Request.Authenticate(auth.clientProof(clientNonce, challenge.nonce()))));
            byte[] key = auth.sessionKey(clientNonce, challenge.nonce());
            channel.authenticate(Auth.frameKey(key, "client"), Auth.frameKey(key, "server"));
            Reply admitted;
            try {
                admitted = Codec.reply(channel.receive(MAX_REPLY_BYTES, deadline));
            } catch (FrameChannel.BadMac e) {
                // A server that refused our proof answers in clear: it cannot know the key we check with.
                throw new ControlProtocolException("server refused: " + clearFailure(e.frame, e));
            }
            if (admitted instanceof Reply.Failure f) {
                throw new ControlProtocolException("server: " + f.message());
            }
            if (!(admitted instanceof Reply.Welcome welcome)) {
                throw new ControlProtocolException("expected 'welcome', got '" + Codec.typeOf(admitted) + "'");
            }
            return new ControlClient(channel, timeoutMs, key, welcome.limits());
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** The server's first reply; another protocol version is told apart from a broken message. */
    /**
     * The control connection's socket. Its local port is an ephemeral one, which may be one of the data ports a
     * receiver on this host listens on next (lossprobe's default ports lie in Linux's ephemeral range 32768-60999,
     * and a controller in reverse mode listens for TCP on its own host): a listener can take a port a live or
     * TIME_WAIT connection holds only when both sockets set SO_REUSEADDR, so this one does (the lab's reverse test
     * failed on it once: "cannot listen for TCP on 0.0.0.0 ports 48600-48607: Address already in use").
     */
    static Socket newSocket() throws IOException {
        Socket socket = new Socket();
        socket.setReuseAddress(true);
        return socket;
    }

    private static Reply handshakeReply(byte[] frame) throws ControlProtocolException {
        JsonNode node = Codec.tree(frame);
        JsonNode version = node.get("version");
        if (version != null && version.isIntegralNumber() && version.asInt() != Codec.VERSION) {
            JsonNode message = node.get("message");
            throw new ControlProtocolException("the server speaks control protocol " + version.asInt()
                + ", this controller " + Codec.VERSION + ": run the same lossprobe version on both hosts"
                + (message != null && message.isTextual() ? " (server: " + PeerText.clean(message.asText()) + ")"
                : ""));
        }
        Reply reply = Codec.read(node, Reply.class);
        if (reply instanceof Reply.Failure f) {
            throw new ControlProtocolException("server: " + f.message());
        }
        return reply;
    }

    /** The text of a clear error frame, or the MAC failure itself when the frame is not one. */
    private static String clearFailure(byte[] frame, ControlProtocolException macFailure)
        throws ControlProtocolException {
        Reply reply;
        try {
            reply = Codec.reply(frame);
        } catch (ControlProtocolException notClear) {
            throw macFailure;
        }
        if (reply instanceof Reply.Failure f) {
            return f.message();
        }
        throw macFailure;
    }

    /**
     * Sends the plan with the options every transport of it declares as applying on a server ({@code options}
     * filtered by {@code transports}' declarations); returns the address the server's receivers are bound to.
     */
    public String negotiate(Plan plan, int runId, Map<String, String> options, Collection<Transport> transports)
        throws IOException {
        Map<String, String> forServer = TransportOptions.forServer(options, transports);
        return request(new Request.PlanRequest(runId, plan.withTransportOptions(forServer)), Reply.PlanOk.class)
            .bindAddress();
    }

    /**
     * {@link #negotiate(Plan, int, Map, Collection)} with the run's data key chosen here and given to the server
     * wrapped under this session ({@code run --from}: the sending and the receiving server are two sessions, and
     * must tag and check with one key). {@link #dataKey} answers {@code runKey} from now on.
     */
    public String negotiate(Plan plan, int runId, Map<String, String> options, Collection<Transport> transports,
                            MessageAuth runKey) throws IOException {
        Map<String, String> forServer = TransportOptions.forServer(options, transports);
        String bound = request(new Request.PlanRequest(runId, plan.withTransportOptions(forServer),
            runKey.wrapFor(sessionKey, runId)), Reply.PlanOk.class).bindAddress();
        sharedKey = runKey;
        return bound;
    }

    /**
     * Where a {@code run --from} server sends: the serve it authenticated at {@code target} (its address as the
     * connection reached it) and the address its data leaves from.
     */
    public record SendTarget(String target, String source) {
    }

    /**
     * {@code run --from}: asks this server to send to the {@code lossprobe serve} at {@code host:port}; the server
     * connects there and proves the secret as a controller would, and refuses unless that serve proves it first.
     */
    public SendTarget sendTo(String host, int port) throws IOException {
        // The server's own connect and handshake take up to its timeout: this request waits that long and more.
        Reply.SendToOk ok = request(new Request.SendTo(host, port), Reply.SendToOk.class,
            ServerSession.SEND_TO_TIMEOUT_MS + timeoutMs);
        return new SendTarget(ok.target(), ok.source());
    }

    /** The server's host counters now: /proc, CPU time and its clock ({@code run --from}'s sending host). */
    public io.lossprobe.core.counters.HostCounters.Sample hostSample() throws IOException {
        Reply.HostSample h = request(new Request.HostSample(), Reply.HostSample.class);
        return new io.lossprobe.core.counters.HostCounters.Sample(h.counters(), h.cpuBusyJiffies(),
            h.cpuTotalJiffies(), h.processCpuNs(), h.wallNs());
    }

    /** {@link #negotiate(Plan, int, Map, Collection)} with the plan's transports found on the class path. */
    public String negotiate(Plan plan, int runId, Map<String, String> options) throws IOException {
        Map<String, Transport> available = Transports.available();
        List<Transport> used = new ArrayList<>();
        for (String name : plan.transports()) {
            if (available.containsKey(name)) {
                used.add(available.get(name));
            }
        }
        return negotiate(plan, runId, options, used);
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
        byte[] msg = Codec.encode(new Request.Clock(seq));
        long t1 = System.nanoTime();
        channel.send(msg);
        byte[] frame;
        try {
            frame = channel.receive(MAX_REPLY_BYTES, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
        } catch (FrameChannel.Silent e) {
            channel.close(); // as in request: a late reply would answer the next request
            throw e;
        }
        Reply reply = Codec.reply(frame);
        long t4 = System.nanoTime();
        Reply.ClockReply c = expect(reply, Reply.ClockReply.class);
        if (c.seq() != seq) {
            throw new ControlProtocolException("clock reply for another request");
        }
        return new ClockSync.Stamps(t1, c.t2(), c.t3(), t4);
    }

    /** The longest a request waits for the server's reply, unless it says otherwise. */
    int timeoutMs() {
        return timeoutMs;
    }

    /** One request and its reply, which must be of type {@code expected}; the server's error is an exception. */
    <R extends Reply> R request(Request msg, Class<R> expected) throws IOException {
        return request(msg, expected, timeoutMs);
    }

    /**
     * {@link #request(Request, Class)} with its own bound on the server's silence: a poll during a step, where a
     * server that does not answer within {@code silenceMs} is gone or cut off, and this host's sending must stop.
     */
    synchronized <R extends Reply> R request(Request msg, Class<R> expected, int silenceMs) throws IOException {
        channel.send(Codec.encode(msg));
        byte[] reply;
        try {
            reply = channel.receive(MAX_REPLY_BYTES, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(silenceMs));
        } catch (FrameChannel.Silent e) {
            // The reply may still come, and would answer the next request: the connection is done with. Every
            // request after this fails at once, so a run that gives up on a silent server ends without waiting
            // out the control timeout once more for each of its goodbyes.
            channel.close();
            throw new ControlProtocolException("the server did not answer '" + Codec.typeOf(msg) + "' within "
                + silenceMs + " ms");
        }
        return expect(Codec.reply(reply), expected);
    }

    private static <R extends Reply> R expect(Reply reply, Class<R> expected) throws ControlProtocolException {
        if (reply instanceof Reply.Failure f) {
            throw new ControlProtocolException("server: " + f.message());
        }
        if (!expected.isInstance(reply)) {
            throw new ControlProtocolException("expected '" + expected.getSimpleName() + "', got '"
                + Codec.typeOf(reply) + "'");
        }
        return expected.cast(reply);
    }

    /** Receive sides on the server, one per transport in the engine's order. */
    public ReceiveSideFactory receiveSides() {
        return receiveSides(null);
    }

    /**
     * Receive sides on the server taking data only from {@code source} ({@code run --from}: the sending server's
     * address as it reported it; null: this controller's).
     */
    public ReceiveSideFactory receiveSides(String source) {
        return new ReceiveSideFactory() {
            @Override
            public ReceiveSide open(Transport transport, Plan plan, int runId, MessageAuth auth,
                                    Map<String, String> options) throws IOException {
                return new RemoteReceiveSide(ControlClient.this, transport.name(), plan.ports(), plan.messageSize(),
                    source);
            }

            @Override
            public MessageAuth dataKey(int runId) {
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
            public SendSide open(Transport transport, Plan plan, int runId, MessageAuth auth,
                                 Map<String, String> options) throws IOException {
                return new RemoteSendSide(ControlClient.this, transport.name(), plan,
                    transport.senderOpenTimeoutMs(plan, options));
            }

            @Override
            public MessageAuth dataKey(int runId) {
                return ControlClient.this.dataKey(runId);
            }
        };
    }

    @Override
    public void close() {
        try {
            channel.send(Codec.encode(new Request.Bye()));
        } catch (IOException e) {
            // Closing anyway.
        }
        channel.close();
    }

    /** The server's environment, its keys marked remote. */
    static Map<String, Long> remote(Map<String, Long> environment) {
        Map<String, Long> out = new HashMap<>();
        environment.forEach((k, v) -> out.put("remote." + k, v));
        return out;
    }

    /** {@code values}, which must hold one value per flow. */
    static long[] ofLength(long[] values, int flows, String what) throws ControlProtocolException {
        if (values.length != flows) {
            throw new ControlProtocolException(what + " for " + values.length + " flows, not " + flows);
        }
        return values;
    }
}
