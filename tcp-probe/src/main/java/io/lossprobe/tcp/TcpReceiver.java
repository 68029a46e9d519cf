package io.lossprobe.tcp;

import io.lossprobe.core.transport.BindFailure;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.transport.Closing;
import io.lossprobe.core.transport.EchoReplies;
import io.lossprobe.core.transport.LoopErrors;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.TransportReport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.ServerSocketChannelConfig;
import io.netty.channel.socket.SocketChannel;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One listening socket per flow (port {@code basePort + i}); each accepted connection gets a {@link MessageFramer}
 * that hands messages to the flow's {@link FlowReceiver}. Listeners and connections share one event loop, so the
 * accounting runs on one thread and {@link #onFlowThreads} runs between reads.
 */
final class TcpReceiver implements ReceiverEndpoint {

    private final EventLoopGroup group;
    private final List<Channel> listeners;
    /** Per flow: the live accepted connections (normally one) and what happened to them. Event loop only. */
    private final List<List<Channel>> connections;
    private final ConnectionStats[] stats;
    private final Map<String, Long> environment = new HashMap<>();
    /** Connections' I/O errors and failed accepts, per flow, in words for the step's notes. */
    private final LoopErrors connectionErrors;
    private final LoopErrors acceptErrors;
    /** Echo mode: the replies sent and dropped, per flow; null otherwise. */
    private final EchoReplies replies;
    private volatile boolean paused;
    /** Per flow, how its connections are set up: the same for an accepted one and one this side opened. */
    private final java.util.function.Consumer<SocketChannel>[] dataPipelines;
    /** Per flow, the connection {@link #punch} opened (connecting, or up), else null. Event loop only. */
    private final Channel[] punches;
    /** {@link #punch}'s connections: the bind address, the flows' options and classes. */
    private io.netty.bootstrap.Bootstrap punchBootstrap;
    /** {@link #punch}: the only address it connects to (null: any), and each flow's class. */
    private String punchPeer;
    private java.util.function.IntUnaryOperator punchTos;

    private TcpReceiver(EventLoopGroup group, FlowReceiver[] flowAccounting, int basePort, boolean echo) {
        int flows = flowAccounting.length;
        this.group = group;
        this.replies = echo ? new EchoReplies(flowAccounting) : null;
        this.connectionErrors = LoopErrors.perFlow("connection", "tcp", basePort, flows);
        this.acceptErrors = LoopErrors.perFlow("accept", "tcp", basePort, flows);
        this.listeners = new ArrayList<>(flows);
        this.connections = new ArrayList<>(flows);
        this.stats = new ConnectionStats[flows];
        @SuppressWarnings("unchecked")
        java.util.function.Consumer<SocketChannel>[] pipelines = new java.util.function.Consumer[flows];
        this.dataPipelines = pipelines;
        this.punches = new Channel[flows];
        for (int i = 0; i < flows; i++) {
            connections.add(new ArrayList<>(1));
            stats[i] = new ConnectionStats();
            int flow = i;
            stats[i].onError = cause -> connectionErrors.record(flow, cause);
        }
    }

    static TcpReceiver open(ReceiverSpec spec, TcpSettings settings) throws Exception {
        int flows = spec.flows().length;
        TcpReceiver receiver = new TcpReceiver(settings.io().newGroup("lossprobe-tcp-rx"), spec.flows(),
            spec.plan().basePort(), spec.plan().echo());
        try {
            for (int i = 0; i < flows; i++) {
                receiver.listen(spec, settings, i);
            }
            receiver.punchBootstrap = receiver.punchBootstrap(spec, settings);
        } catch (Exception e) {
            receiver.close();
            throw BindFailure.of("listen for TCP", spec.bindAddress(),
                spec.plan().basePort(), spec.plan().port(flows - 1), e);
        }
        receiver.environment.put(settings.io().environmentKey(), 1L);
        if (settings.receiveBufferBytes() > 0) {
            receiver.environment.put(TcpEnvironment.RECEIVE_BUFFER_REQUESTED.key, (long) settings.receiveBufferBytes());
        }
        receiver.environment.put(TcpEnvironment.RECEIVE_BUFFER_GRANTED.key, (long) ((ServerSocketChannelConfig)
            receiver.listeners.get(0).config()).getReceiveBufferSize());
        return receiver;
    }

    /** Linux IP_TOS (SOL_IP 0, optname 1) and IPV6_TCLASS (SOL_IPV6 41, optname 67), for a listening socket. */
    static final io.netty.channel.unix.IntegerUnixChannelOption LISTENER_IP_TOS =
        new io.netty.channel.unix.IntegerUnixChannelOption("IP_TOS", 0, 1);
    static final io.netty.channel.unix.IntegerUnixChannelOption LISTENER_IPV6_TCLASS =
        new io.netty.channel.unix.IntegerUnixChannelOption("IPV6_TCLASS", 41, 67);

    /**
     * One listener per flow that takes one connection at a time, from the flow's sender: between hosts only from
     * the controller's address. Any other connection (another address, or a second one while the flow has its
     * connection) is closed at once with a reset and counted as refused, so a flood of connections costs no file
     * descriptors and cannot reach the accounting. A connection that hears nothing for the idle timeout is closed.
     */
    private void listen(ReceiverSpec spec, TcpSettings settings, int flow) throws Exception {
        FlowReceiver accounting = spec.flows()[flow];
        boolean echo = spec.plan().echo();
        int messageLength = spec.plan().messageSize();
        List<Channel> live = connections.get(flow);
        ConnectionStats flowStats = stats[flow];
        java.net.InetAddress onlyFrom = spec.peer() == null ? null : java.net.InetAddress.getByName(spec.peer());
        long idleNs = idleTimeoutNs(spec.plan());
        // A connection this flow takes (accepted, or opened by punch): read into the flow's accounting, closed when
        // it hears nothing for the idle timeout.
        dataPipelines[flow] = ch -> {
            flowStats.accepted++;
            live.add(ch);
            ch.closeFuture().addListener(f -> live.remove(ch));
            ch.config().setAutoRead(!paused);
            ch.pipeline().addLast(
                new io.netty.handler.timeout.IdleStateHandler(idleNs, 0, 0, TimeUnit.NANOSECONDS) {
                    @Override
                    protected void channelIdle(io.netty.channel.ChannelHandlerContext ctx,
                                               io.netty.handler.timeout.IdleStateEvent evt) {
                        flowStats.idleCloses++;
                        ctx.close();
                    }
                });
            if (echo) {
                EchoReplier replier = new EchoReplier(replies.flow(flow));
                MessageSink answering = (w0, w1, seq, sendNs, actualNs, tag, length, arrivalNs) -> {
                    if (accounting.onMessage(w0, w1, seq, sendNs, actualNs, tag, length, arrivalNs)) {
                        replier.reply(w0, w1, seq, sendNs, actualNs);
                    }
                };
                ch.pipeline().addLast(new MessageFramer(answering, messageLength, flowStats), replier);
            } else {
                ch.pipeline().addLast(new MessageFramer(accounting::onMessage,
                    spec.plan().messageLengths(), flowStats));
            }
        };
        ServerBootstrap b = new ServerBootstrap().group(group, group).channel(settings.io().serverChannel())
            .option(ChannelOption.SO_REUSEADDR, true)
            .option(ChannelOption.SO_BACKLOG, 16)
            .handler(new AcceptBackoff(acceptErrors, flow))
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    java.net.InetAddress from = ch.remoteAddress().getAddress();
                    if (!live.isEmpty() || (onlyFrom != null && !onlyFrom.equals(from))) {
                        flowStats.refused++;
                        ch.config().setOption(ChannelOption.SO_LINGER, 0); // a reset: no TIME_WAIT left behind
                        ch.close();
                        return;
                    }
                    dataPipelines[flow].accept(ch);
                }
            });
        int tos = spec.plan().tosOf(flow);
        if (tos >= 0) {
            // The flow's class on what this side sends (ACKs, echo replies): every accepted connection's, and the
            // listener's for the SYN-ACK. Netty's server channels take no IP_TOS (the SYN-ACK left unmarked, seen in
            // the lab): with epoll it is set as a raw option; Java's ServerSocketChannel has none (NIO: unmarked).
            b.childOption(ChannelOption.IP_TOS, tos);
            if (settings.io() == io.lossprobe.netty.NettyIo.EPOLL) {
                b.option(LISTENER_IP_TOS, tos);
                if (java.net.InetAddress.getByName(spec.bindAddress()) instanceof java.net.Inet6Address) {
                    b.option(LISTENER_IPV6_TCLASS, tos);
                }
            }
        }
        if (settings.receiveBufferBytes() > 0) {
            // On the listener, so accepted sockets inherit it before the handshake fixes the window scale.
            b.option(ChannelOption.SO_RCVBUF, settings.receiveBufferBytes());
        }
        Channel listener = b.bind(new InetSocketAddress(spec.bindAddress(), spec.plan().port(flow))).sync().channel();
        listeners.add(listener);
    }

    /** How long one of {@link #punch}'s connects may take before the next punch for the flow tries again. */
    static final int PUNCH_CONNECT_TIMEOUT_MS = 3_000;

    /**
     * The connections {@link #punch} opens: from the bind address (an ephemeral port), with the receive buffer set
     * before the SYN as the listeners set it for what they accept; each flow's class is added per connect.
     */
    private io.netty.bootstrap.Bootstrap punchBootstrap(ReceiverSpec spec, TcpSettings settings) {
        io.netty.bootstrap.Bootstrap b = new io.netty.bootstrap.Bootstrap().group(group)
            .channel(settings.io().socketChannel())
            .localAddress(new InetSocketAddress(spec.bindAddress(), 0))
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, PUNCH_CONNECT_TIMEOUT_MS);
        if (settings.receiveBufferBytes() > 0) {
            b.option(ChannelOption.SO_RCVBUF, settings.receiveBufferBytes());
        }
        punchPeer = spec.peer();
        punchTos = spec.plan()::tosOf;
        return b;
    }

    /**
     * A sender whose receivers are behind a NAT listens instead of connecting: this connects to {@code to} (the
     * sender's port for the flow), writes {@code datagram} (the flow's punch) as its first bytes and from then on
     * takes the connection as the flow's, exactly as an accepted one. Returns once the connect is under way; again
     * for a flow whose connection is being made or is up it does nothing, and it connects anew only when the last
     * attempt failed or ended. Between hosts only to the peer's address.
     */
    @Override
    public void punch(int flow, InetSocketAddress to, byte[] datagram) throws Exception {
        if (punchPeer != null && !io.lossprobe.core.plan.Addresses.sameHost(to.getAddress(),
            java.net.InetAddress.getByName(punchPeer))) {
            throw new IllegalArgumentException("tcp flow " + flow + ": a punch goes to the peer " + punchPeer
                + " only, not to " + to);
        }
        byte[] punch = datagram.clone();
        onLoop(() -> {
            Channel previous = punches[flow];
            if (previous != null && previous.isOpen()) {
                return; // connecting, or up: one connection per flow
            }
            // Its handlers come once it is up (the flow's, as an accepted connection's): none until then.
            io.netty.bootstrap.Bootstrap b = punchBootstrap.clone()
                .handler(new io.netty.channel.ChannelInboundHandlerAdapter());
            int tos = punchTos.applyAsInt(flow);
            if (tos >= 0) {
                b.option(ChannelOption.IP_TOS, tos); // before the connect: the SYN is marked too
            }
            io.netty.channel.ChannelFuture connecting = b.connect(to);
            punches[flow] = connecting.channel();
            connecting.addListener((io.netty.channel.ChannelFutureListener) f -> {
                if (!f.isSuccess()) {
                    f.channel().close(); // a lost punch: the next punch for the flow connects again
                    return;
                }
                dataPipelines[flow].accept((SocketChannel) f.channel());
                f.channel().writeAndFlush(io.netty.buffer.Unpooled.wrappedBuffer(punch))
                    .addListener(io.netty.channel.ChannelFutureListener.CLOSE_ON_FAILURE);
            });
        });
    }

    /** Whether flow {@code flow}'s connection from {@link #punch} is being made or is up (for tests). */
    boolean punching(int flow) throws Exception {
        boolean[] open = {false};
        onLoop(() -> open[0] = punches[flow] != null && punches[flow].isOpen());
        return open[0];
    }

    /**
     * How long a connection may stay silent: longer than any quiet spell of a run (a drain, the steps' set-up,
     * another transport's turn is not: connections close between transports), at least a minute.
     */
    static long idleTimeoutNs(io.lossprobe.core.plan.Plan plan) {
        return Math.max(TimeUnit.SECONDS.toNanos(60),
                2 * plan.drainNs() + plan.warmupNs() + TimeUnit.SECONDS.toNanos(30));
    }

    /** Every flow's connection reads on the group's single event loop: each flow's action runs there, in turn. */
    @Override
    public void onFlowThreads(java.util.function.IntConsumer action) throws Exception {
        onLoop(() -> {
            for (int i = 0; i < stats.length; i++) {
                action.accept(i);
            }
        });
    }

    /** Runs {@code action} on the one event loop, between reads, and waits for it. */
    private void onLoop(Runnable action) throws Exception {
        group.next().submit(action).get(30, TimeUnit.SECONDS);
    }

    @Override
    public void setPaused(boolean paused) throws Exception {
        this.paused = paused;
        onLoop(() -> {
            for (List<Channel> live : connections) {
                for (Channel c : live) {
                    c.config().setAutoRead(!paused);
                }
            }
        });
    }

    @Override
    public void beginStep(int step) {
        if (replies != null) {
            replies.beginStep();
        }
    }

    /**
     * Counts since the last report (echo's replies since the step began); connection errors and failed accepts
     * are said in words too.
     */
    @Override
    public TransportReport endStep() throws Exception {
        Map<Integer, Map<String, Long>> flows = new HashMap<>();
        Map<String, Long> totals = new HashMap<>();
        List<String> notes = new ArrayList<>(connectionErrors.notes());
        notes.addAll(acceptErrors.notes());
        long accepts = acceptErrors.sinceStepStart();
        if (accepts > 0) {
            totals.put(TcpCounter.ACCEPT_ERRORS.key, accepts);
        }
        connectionErrors.beginStep();
        acceptErrors.beginStep();
        onLoop(() -> {
            for (int i = 0; i < stats.length; i++) {
                ConnectionStats s = stats[i];
                Map<String, Long> flow = new HashMap<>();
                flow.put(TcpCounter.CONNECTIONS_CLOSED.key, s.closed);
                flow.put(TcpCounter.CONNECTION_ERRORS.key, s.errors);
                flow.put(TcpCounter.GARBAGE_CLOSES.key, s.garbageCloses);
                flow.put(TcpCounter.TRUNCATED_BYTES.key, s.truncatedBytes);
                flow.put(TcpCounter.CONNECTIONS_ACCEPTED.key, s.accepted);
                flow.put(TcpCounter.CONNECTIONS_REFUSED.key, s.refused);
                flow.put(TcpCounter.IDLE_CLOSES.key, s.idleCloses);
                flow.put(TransportReport.FOREIGN, s.refused); // connections that could not be the sender's
                flows.put(i, flow);
                flow.forEach((k, v) -> {
                    if (!k.equals(TransportReport.FOREIGN)) { // the step's foreign count carries these
                        totals.merge(k, v, Long::sum);
                    }
                });
                s.reset();
            }
        });
        if (replies != null) {
            replies.report(totals, flows);
        }
        return new TransportReport(totals, flows, notes);
    }

    /**
     * Test seam: aborts flow {@code flow}'s connection the way a crashed peer would, with SO_LINGER 0 so the
     * close sends a RST instead of a FIN.
     */
    void resetConnection(int flow) throws Exception {
        onLoop(() -> {
            for (Channel c : List.copyOf(connections.get(flow))) {
                c.config().setOption(ChannelOption.SO_LINGER, 0);
                c.close();
            }
        });
    }

    /**
     * Whether flow {@code flow}'s connection reads (for tests: an echo responder stops reading while its replies
     * back up).
     */
    boolean reading(int flow) throws Exception {
        boolean[] reading = {false};
        onLoop(() -> {
            for (Channel c : connections.get(flow)) {
                reading[0] |= c.config().isAutoRead();
            }
        });
        return reading[0];
    }

    /** The one event loop every listener and connection runs on (for tests). */
    java.util.concurrent.Executor loop() {
        return group.next();
    }

    /** Failed accepts so far (for tests; safe from any thread). */
    LoopErrors acceptErrors() {
        return acceptErrors;
    }

    /** Live connections of {@code flow} (for tests and checks). */
    int connections(int flow) throws Exception {
        int[] n = new int[1];
        onLoop(() -> n[0] = connections.get(flow).size());
        return n[0];
    }

    @Override
    public Map<String, Long> environment() {
        return environment;
    }

    /** Bounded: a receive loop that died or hangs must not hang the run's end (see {@link Closing}). */
    @Override
    public void close() {
        Closing.closeAll(listeners, Channel::close, () -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS));
    }
}
