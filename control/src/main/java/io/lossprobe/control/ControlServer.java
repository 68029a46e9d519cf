package io.lossprobe.control;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.transport.Transport;
import java.io.EOFException;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * {@code lossprobe serve}: the receiving host. A connection first passes the handshake, held apart from sessions
 * ({@link PreAuthGate}) and bounded by one deadline and a small frame cap; the server proves it knows the secret
 * first, then the controller. An authenticated controller gets a session ({@link ServerSession}) if one of
 * {@code maxSessions} is free; from then on every frame in both directions is MACed ({@link FrameChannel}). Each
 * session gets transport instances of its own, so sessions share nothing of a run.
 *
 * <p>The server sends data traffic only in a {@code --reverse} session, and then only to that authenticated
 * controller's own address (the peer of the control connection), or in a {@code run --from} session to the serve
 * it connected to itself and that proved the secret to it; never to an address a message names otherwise.
 */
public final class ControlServer implements AutoCloseable {
    /** Largest frame before authentication: a hello or an auth answer is under 300 bytes. */
    static final int PRE_AUTH_MAX_BYTES = 4096;
    /** Largest frame from an authenticated controller: a close-step carrying the most failed ranges fits. */
    static final int MAX_REQUEST_BYTES = 4 << 20;
    /** How long a plan waits for its ports to be freed by a session that is ending before it is refused. */
    static final long PORT_RELEASE_WAIT_NS = TimeUnit.SECONDS.toNanos(2);

    private final String bindAddress;
    private final Auth auth;
    private final ServerLimits limits;
    private final Supplier<Map<String, Transport>> transports;
    private final PrintWriter log;
    private final ServerSocket serverSocket;
    private final PreAuthGate gate;
    private final Set<ServerSession> sessions = ConcurrentHashMap.newKeySet();
    private final Set<FrameChannel> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger connectionIds = new AtomicInteger();
    private final AtomicLong internalErrors = new AtomicLong();
    /** Unauthenticated connections' failures are logged at most this often, so strangers cannot flood the log. */
    private final LogLimiter preAuthLog = new LogLimiter(10, TimeUnit.SECONDS.toNanos(10));
    private final Thread acceptor;
    private volatile boolean closed;
    private volatile ClockSync.ServerClock serverClock = ClockSync.ServerClock.SYSTEM;

    /**
     * @param transports makes the transports, fresh for every session (an instance may share resources between
     *                   the receiver and sender of one run, never across sessions)
     */
    public ControlServer(String bindAddress, int port, Auth auth, ServerLimits limits,
                         Supplier<Map<String, Transport>> transports, PrintWriter log) throws IOException {
        this.bindAddress = bindAddress;
        this.auth = auth;
        this.limits = limits;
        this.transports = transports;
        this.log = log;
        this.gate = new PreAuthGate(limits.preAuthPerAddress(), limits.preAuthTotal());
        HandshakeWarmup.run(auth);
        this.serverSocket = new ServerSocket();
        serverSocket.setReuseAddress(true);
        serverSocket.bind(new InetSocketAddress(InetAddress.getByName(bindAddress), port), 64);
        this.acceptor = new Thread(this::acceptLoop, "lossprobe-serve");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Test seam: the clock that stamps {@code clock} replies (a shifted, wrapping or skewed one). */
    void useClock(ClockSync.ServerClock clock) {
        this.serverClock = clock;
    }

    ClockSync.ServerClock clock() {
        return serverClock;
    }

    public int port() {
        return serverSocket.getLocalPort();
    }

    /** Authenticated sessions under way. */
    public int activeSessions() {
        return sessions.size();
    }

    /** Connections that have not authenticated yet. */
    public int preAuthConnections() {
        return gate.size();
    }

    /** Unauthenticated connections closed to make room for newer ones. */
    public long preAuthEvictions() {
        return gate.evicted();
    }

    /**
     * Exceptions this server's own code did not expect (a bug, not a peer's fault): each was logged, ended its
     * connection and nothing else. Tests expect none.
     */
    public long internalErrors() {
        return internalErrors.get();
    }

    String bindAddress() {
        return bindAddress;
    }

    /** The secret this server proves, which it also proves as a controller to a serve it sends to. */
    Auth auth() {
        return auth;
    }

    ServerLimits limits() {
        return limits;
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
            long acceptedNs = System.nanoTime();
            PreAuthGate.Ticket ticket = gate.admit(socket);
            int id = connectionIds.incrementAndGet();
            try {
                Thread t = new Thread(() -> handle(socket, ticket, acceptedNs, id), "lossprobe-control-" + id);
                t.setDaemon(true);
                t.start();
            } catch (OutOfMemoryError | RuntimeException e) {
                gate.leave(ticket); // no thread to be had: this connection is refused
                closeQuietly(socket);
            }
        }
    }

    private void handle(Socket socket, PreAuthGate.Ticket ticket, long acceptedNs, int id) {
        String peer = io.lossprobe.core.plan.Addresses.text(socket.getInetAddress());
        FrameChannel channel = null;
        ServerSession session = null;
        try {
            channel = new FrameChannel(socket, limits.writeTimeoutMs());
            connections.add(channel);
            if (closed) {
                return;
            }
            byte[] sessionKey;
            try {
                sessionKey = handshake(channel,
                        acceptedNs + TimeUnit.MILLISECONDS.toNanos(limits.handshakeTimeoutMs()));
            } catch (IOException e) {
                preAuthFailure(channel, peer, ticket.evicted
                    ? new java.io.EOFException("closed to make room for a newer unauthenticated connection") : e);
                return;
            } finally {
                gate.leave(ticket);
            }
            channel.authenticate(Auth.frameKey(sessionKey, "server"), Auth.frameKey(sessionKey, "client"));
            session = new ServerSession(this, id, channel, sessionKey, transports.get());
            if (!admit(session)) {
                session = null;
                log("controller " + peer + " authenticated but refused: " + limits.maxSessions() + " sessions busy");
                channel.send(Codec.encode(new Reply.Failure(Codec.VERSION, "server busy: " + limits.maxSessions()
                    + " sessions already")));
                return;
            }
            channel.send(Codec.encode(new Reply.Welcome(limits)));
            session.run();
        } catch (IOException e) {
            log("connection " + id + " from " + peer + " closed: " + PeerText.clean(e.getMessage()));
        } catch (RuntimeException | Error e) {
            internalError("connection " + id + " from " + peer, e);
        } finally {
            gate.leave(ticket);
            if (session != null) {
                sessions.remove(session);
                releasePorts(session);
            }
            if (channel != null) {
                connections.remove(channel);
                channel.close();
            } else {
                closeQuietly(socket);
            }
        }
    }

    /**
     * Hello, challenge (the server's proof), auth (the controller's), all by {@code deadlineNs}; returns the
     * session key. A hello of another protocol version is answered in that version's terms, so the other end can
     * print why.
     */
    private byte[] handshake(FrameChannel channel, long deadlineNs) throws IOException {
        JsonNode first = Codec.tree(channel.receive(PRE_AUTH_MAX_BYTES, deadlineNs));
        JsonNode version = first.get("version");
        if (version != null && version.canConvertToInt() && version.isIntegralNumber()
            && version.asInt() != Codec.VERSION) {
            String why = "this server speaks control protocol " + Codec.VERSION + ", the controller "
                + version.asInt() + ": run the same lossprobe version on both hosts";
            channel.send(Codec.encode(new Reply.Failure(version.asInt(), why)));
            throw new EOFException(why);
        }
        Request hello = Codec.read(first, Request.class);
        if (!(hello instanceof Request.Hello h)) {
            throw new ControlProtocolException("expected 'hello' first, got '" + Codec.typeOf(hello) + "'");
        }
        if (h.version() != Codec.VERSION) {
            throw new ControlProtocolException("protocol version " + h.version() + " is not " + Codec.VERSION);
        }
        String serverNonce = Auth.nonce();
        channel.send(Codec.encode(new Reply.Challenge(Codec.VERSION, serverNonce,
            auth.serverProof(h.nonce(), serverNonce))));
        Request answer = Codec.request(channel.receive(PRE_AUTH_MAX_BYTES, deadlineNs));
        if (!(answer instanceof Request.Authenticate a)) {
            throw new ControlProtocolException("expected 'auth', got '" + Codec.typeOf(answer) + "'");
        }
        if (!Auth.verify(auth.clientProof(h.nonce(), serverNonce), a.proof())) {
            throw new ControlProtocolException("authentication failed");
        }
        return auth.sessionKey(h.nonce(), serverNonce);
    }

    /** Logs (rate-limited) and answers a protocol error in clear; a dropped connection gets no answer. */
    private void preAuthFailure(FrameChannel channel, String peer, IOException e) {
        String why = PeerText.clean(e.getMessage());
        String line = preAuthLog.pass("unauthenticated connection from " + peer + " closed: " + why);
        if (line != null) {
            log(line);
        }
        if (e instanceof ControlProtocolException) {
            try {
                channel.send(Codec.encode(new Reply.Failure(Codec.VERSION, why)));
            } catch (IOException | RuntimeException ignored) {
                // The peer is gone already.
            }
        }
    }

    private synchronized boolean admit(ServerSession session) {
        if (closed || sessions.size() >= limits.maxSessions()) {
            return false;
        }
        sessions.add(session);
        return true;
    }

    /**
     * Reserves [base, base + ports) for {@code who}; false when another session still holds any of them after
     * {@link #PORT_RELEASE_WAIT_NS}. The wait is for the common case of a controller that starts its next run as
     * soon as the last one ended: the server notices the old connection's end a moment after the controller does.
     */
    synchronized boolean reserve(ServerSession who, int base, int ports) {
        long deadline = System.nanoTime() + PORT_RELEASE_WAIT_NS;
        while (heldByAnother(who, base, ports)) {
            long leftNs = deadline - System.nanoTime();
            if (leftNs <= 0) {
                return false;
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, leftNs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        who.basePort = base;
        who.ports = ports;
        return true;
    }

    private boolean heldByAnother(ServerSession who, int base, int ports) {
        for (ServerSession s : sessions) {
            if (s != who && s.ports > 0 && base < s.basePort + s.ports && s.basePort < base + ports) {
                return true;
            }
        }
        return false;
    }

    private synchronized void releasePorts(ServerSession session) {
        session.ports = 0;
        notifyAll();
    }

    void internalError(String where, Throwable e) {
        internalErrors.incrementAndGet();
        log(where + ": internal error " + e.getClass().getSimpleName() + ": " + PeerText.clean(e.getMessage()));
    }

    void log(String line) {
        if (log != null) {
            synchronized (log) {
                log.println("lossprobe serve: " + line);
                log.flush();
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // Nothing to do.
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            serverSocket.close();
        } catch (IOException e) {
            // Closing anyway.
        }
        for (FrameChannel c : connections) {
            c.close();
        }
    }

    /** Lets through at most {@code perWindow} lines per window, then says how many it held back. */
    static final class LogLimiter {
        private final int perWindow;
        private final long windowNs;
        private long windowStart = System.nanoTime();
        private int used;
        private long suppressed;

        LogLimiter(int perWindow, long windowNs) {
            this.perWindow = perWindow;
            this.windowNs = windowNs;
        }

        /** The line to log (with a count of those held back before it), or null to drop it. */
        synchronized String pass(String line) {
            long now = System.nanoTime();
            String prefix = "";
            if (now - windowStart >= windowNs) {
                if (suppressed > 0) {
                    prefix = "(" + suppressed + " similar lines not logged) ";
                }
                windowStart = now;
                used = 0;
                suppressed = 0;
            }
            if (used >= perWindow) {
                suppressed++;
                return null;
            }
            used++;
            return prefix + line;
        }
    }
}
