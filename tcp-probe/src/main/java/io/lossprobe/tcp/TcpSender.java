package io.lossprobe.tcp;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.transport.Closing;
import io.lossprobe.core.transport.CounterDescriptor;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.Punch;
import io.lossprobe.netty.HeldMemoryEstimator;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.SocketChannelConfig;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One connection per flow, all on one event loop that also runs the send loop, so a flow's writes and flush are
 * plain calls on the connection's own thread: each flush is one write (or writev) syscall per flow per cycle.
 *
 * <p>The sender connects to each flow's receiver on the plan's port; with receivers behind a NAT
 * ({@code SenderSpec.behindNat}) it cannot, and listens instead: each receiver connects out to its flow's
 * {@link #sourcePorts} with its punch first ({@link PunchedListeners}), and that connection, once verified, carries
 * the flow's data exactly as a connected one does. Such a flow cannot be reconnected: one whose connection ended
 * stays down, its messages refused (sendFailed), with a note in every later step.
 */
final class TcpSender implements SenderEndpoint {
    private static final Map<String, CounterDescriptor> DECLARED = CounterDescriptor.byKey(TcpCounter.ALL);
    private static final int CONNECT_TIMEOUT_MS = 5_000;
    /** The longest one flow's connect is waited for: the connect's own timeout, and a second for its listener. */
    static final long CONNECT_WAIT_MS = CONNECT_TIMEOUT_MS + 1_000L;
    /** Longest wait for the last repairs before reporting a step (a connection that stays stuck reports anyway). */
    static final long SETTLE_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(2);
    private static final long SETTLE_POLL_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private final EventLoopGroup group;
    private final EventLoop loop;
    private final Bootstrap bootstrap;
    private final SenderSpec spec;
    private final FlowWriter[] writers;
    private final Map<String, Long> environment = new HashMap<>();
    private final ConnectionStats[] replyStats;
    /** {@code SenderSpec.behindNat}: the flows' listeners and their punched connections; else null. */
    private PunchedListeners punched;

    private TcpSender(EventLoopGroup group, Bootstrap bootstrap, SenderSpec spec, FlowWriter[] writers) {
        this.replyStats = new ConnectionStats[writers.length];
        for (int i = 0; i < writers.length; i++) {
            replyStats[i] = new ConnectionStats();
        }
        this.group = group;
        this.loop = group.next();
        this.bootstrap = bootstrap;
        this.spec = spec;
        this.writers = writers;
    }

    static TcpSender open(SenderSpec spec, TcpSettings settings) throws Exception {
        int flows = spec.plan().ports();
        FlowWriter[] writers = new FlowWriter[flows];
        for (int i = 0; i < flows; i++) {
            writers[i] = new FlowWriter(i, spec.plan().messageSize(), spec.failures());
        }
        EventLoopGroup group = settings.io().newGroup("lossprobe-tcp-tx");
        Bootstrap b = new Bootstrap().group(group).channel(settings.io().socketChannel())
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MS);
        Map<ChannelOption<?>, Object> options = dataOptions(settings);
        options.forEach((o, v) -> b.option(unchecked(o), v));
        TcpSender sender = new TcpSender(group, b, spec, writers);
        if (spec.behindNat()) {
            sender.listen(settings, options);
        } else {
            try {
                for (int i = 0; i < flows; i++) {
                    sender.connect(i, false);
                }
            } catch (Exception e) {
                sender.close();
                throw new java.io.IOException("cannot connect TCP senders to " + spec.targetHost() + " ports "
                    + spec.plan().basePort() + "-" + spec.plan().port(flows - 1) + ": " + e.getMessage(), e);
            }
        }
        sender.environment.put(settings.io().environmentKey(), 1L);
        sender.environment.put(TcpEnvironment.NO_DELAY.key, settings.noDelay() ? 1L : 0L);
        sender.environment.put(TcpEnvironment.WRITE_BUFFER_HIGH_WATER_MARK.key, (long) settings.highWaterMarkBytes());
        if (settings.sendBufferBytes() > 0) {
            sender.environment.put(TcpEnvironment.SEND_BUFFER_REQUESTED.key, (long) settings.sendBufferBytes());
        }
        if (sender.punched == null) {
            SocketChannelConfig config = (SocketChannelConfig) writers[0].channel().config();
            sender.environment.put(TcpEnvironment.SEND_BUFFER_GRANTED.key, (long) config.getSendBufferSize());
        } else if (settings.sendBufferBytes() > 0) {
            // No connection yet (they come with the punches, after this is reported): a fixed buffer is what the
            // kernel grants any socket; an autotuned one is unknown until a connection runs, so it is not said.
            try (java.net.Socket probe = new java.net.Socket()) {
                probe.setSendBufferSize(settings.sendBufferBytes());
                sender.environment.put(TcpEnvironment.SEND_BUFFER_GRANTED.key, (long) probe.getSendBufferSize());
            }
        }
        return sender;
    }

    /** The data connections' socket options, the same whether the sender connects or accepts them. */
    private static Map<ChannelOption<?>, Object> dataOptions(TcpSettings settings) {
        Map<ChannelOption<?>, Object> o = new java.util.LinkedHashMap<>();
        o.put(ChannelOption.TCP_NODELAY, settings.noDelay());
        // Our connections close first and wait in TIME_WAIT on their local ports; a listener (the next run's
        // receiver: the default ports lie in Linux's ephemeral range) can take such a port only when both sockets
        // set SO_REUSEADDR.
        o.put(ChannelOption.SO_REUSEADDR, true);
        // Bounded memory: past the high mark of buffer memory held by writes queued in Netty the flow reports
        // BLOCKED and falls behind (memory held, not bytes unsent: a batch's buffer can be twice its content).
        o.put(ChannelOption.WRITE_BUFFER_WATER_MARK,
            new WriteBufferWaterMark(settings.lowWaterMarkBytes(), settings.highWaterMarkBytes()));
        o.put(ChannelOption.MESSAGE_SIZE_ESTIMATOR, HeldMemoryEstimator.INSTANCE);
        if (settings.sendBufferBytes() > 0) {
            o.put(ChannelOption.SO_SNDBUF, settings.sendBufferBytes());
        }
        return o;
    }

    @SuppressWarnings("unchecked")
    private static ChannelOption<Object> unchecked(ChannelOption<?> option) {
        return (ChannelOption<Object>) option;
    }

    /**
     * Behind a NAT: a listener per flow on the event loop, each accepted connection's options those a connected
     * one has; a verified connection gets the connected path's pipeline and becomes its flow's writer's.
     */
    private void listen(TcpSettings settings, Map<ChannelOption<?>, Object> options) throws Exception {
        int flows = writers.length;
        ServerBootstrap b = new ServerBootstrap().group(loop, loop).channel(settings.io().serverChannel())
            .option(ChannelOption.SO_REUSEADDR, true)
            .option(ChannelOption.SO_BACKLOG, PunchedListeners.PENDING_PER_FLOW);
        options.forEach((o, v) -> b.childOption(unchecked(o), v));
        try {
            punched = PunchedListeners.open(b, loop, new Punch(spec.auth(), spec.runId(), flows),
                java.net.InetAddress.getByName(spec.targetHost()), spec.sourceHost(), flows, spec.plan()::tosOf,
                settings.io() == io.lossprobe.netty.NettyIo.EPOLL, (flow, ch) -> {
                    dataPipeline(ch, flow);
                    writers[flow].attach(ch, false);
                });
        } catch (Exception e) {
            close();
            throw new java.io.IOException("cannot listen for TCP receivers behind a NAT (" + spec.targetHost()
                + "): " + e.getMessage(), e);
        }
    }

    /** Behind a NAT: the port each flow's receiver connects to; else none (this sender connects). */
    @Override
    public int[] sourcePorts() {
        return punched == null ? new int[0] : punched.ports();
    }

    /** Behind a NAT: waits for the flows' verified connections; returns the flows without one. */
    @Override
    public int[] awaitPunches(long timeoutNs) throws Exception {
        if (punched == null) {
            throw new UnsupportedOperationException("these senders connect: they take no punches");
        }
        return punched.await(timeoutNs);
    }

    /** Test seam: connections reset at the listeners without becoming a flow's. */
    long punchesRefused() throws Exception {
        return punched.refused();
    }

    /** The connection's handlers: how it ends, for the writer; in echo mode the replies' framer. */
    private void dataPipeline(Channel ch, int flow) {
        FlowReceiver[] replies = spec.replies();
        ch.pipeline().addLast(writers[flow].events(replies != null));
        if (replies != null) {
            // Echo mode: replies come back on this connection, framed like any lossprobe stream.
            ch.pipeline().addLast(new MessageFramer(replies[flow]::onMessage, spec.plan().messageSize(),
                replyStats[flow]));
        }
    }

    /**
     * Connects flow {@code flow} and attaches the connection to its writer on the event loop, before the first
     * event of the connection can arrive (the connect listener runs as the connect completes).
     */
    private void connect(int flow, boolean reconnect) throws Exception {
        FlowWriter writer = writers[flow];
        CompletableFuture<Channel> attached = new CompletableFuture<>();
        Bootstrap flowBootstrap = bootstrap.clone();
        int tos = spec.plan().tosOf(flow);
        if (tos >= 0) {
            // Before the connect, so the SYN is marked too (IP_TOS; IPV6_TCLASS as well on an IPv6 socket).
            flowBootstrap.option(ChannelOption.IP_TOS, tos);
        }
        ChannelFuture connecting = flowBootstrap.handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                dataPipeline(ch, flow);
            }
        }).connect(new InetSocketAddress(spec.targetHost(), spec.plan().port(flow)), spec.sourceHost() == null ? null
            : new InetSocketAddress(spec.sourceHost(), 0)); // null: the route's preferred source
        connecting.addListener((ChannelFutureListener) f -> {
            if (f.isSuccess()) {
                writer.attach(f.channel(), reconnect);
                attached.complete(f.channel());
            } else {
                attached.completeExceptionally(f.cause());
            }
        });
        attached.get(CONNECT_WAIT_MS, TimeUnit.MILLISECONDS);
    }

    /** Every sender channel shares the group's single event loop: replies are accounted there. */
    @Override
    public void onReplyThread(Runnable action) throws Exception {
        onLoop(() -> {
            action.run();
            return null;
        });
    }

    @Override
    public MessageWriter writer(int flow) {
        return writers[flow];
    }

    /**
     * Reconnects the flows whose connection died in an earlier step, so one failure costs one step at most. Behind
     * a NAT: refuses while a flow has no connection from its receiver yet; one whose connection ended cannot be
     * reconnected and fails again (a note, a connection failure) in every step.
     */
    @Override
    public void beginStep(int step) throws Exception {
        if (punched != null) {
            int[] missing = punched.missing();
            if (missing.length > 0) {
                throw new IllegalStateException("tcp flows " + java.util.Arrays.toString(missing) + " have no"
                    + " connection from their receivers behind the NAT: no step can send to them");
            }
        }
        for (int i = 0; i < writers.length; i++) {
            FlowWriter writer = writers[i];
            if (punched != null) {
                if (onLoop(writer::isDown)) {
                    onLoop(() -> {
                        writer.connectFailed(new java.io.IOException("connection ended; a receiver behind a NAT"
                            + " is reached only on the connection it opened"));
                        return null;
                    });
                }
                continue;
            }
            if (onLoop(writer::isDown)) {
                try {
                    connect(i, true);
                } catch (java.util.concurrent.ExecutionException e) {
                    onLoop(() -> {
                        writer.connectFailed(e.getCause());
                        return null;
                    });
                }
            }
        }
    }

    /** The connections' one event loop: it runs the send loop and completes every write. */
    @Override
    public java.util.concurrent.ScheduledExecutorService sendExecutor() {
        return loop;
    }

    /**
     * The flows staggered: their message k falls due one flow at a time, not all at one instant (written in one
     * cycle, the last flow's long after its stamp). Loopback, 48 flows at 30k/s, alternating (docs/performance.md):
     * delay p50 223-250 -> 57-61 us, transit p50 125-149 -> 16-18 us, process CPU 23-28 % -> 52-69 %; at 1M/s no
     * change beyond the runs' spread.
     */
    @Override
    public io.lossprobe.core.transport.SendPacing pacing() {
        return io.lossprobe.core.transport.SendPacing.DEFAULT.withStaggerFlows(true);
    }

    /** Each flow's retransmissions so far, read on the engine's thread: the window's figures start here. */
    @Override
    public void beginWindow() {
        for (FlowWriter w : writers) {
            w.markWindowStart();
        }
    }

    /**
     * Waits, bounded by {@link #SETTLE_TIMEOUT_NS}, until every flow's data is acknowledged, so no retransmission
     * of this step's data is still to come; then reports. Read before that, the last repairs were missing (1-3
     * per flow below {@code ss -ti}).
     */
    @Override
    public TransportReport endStep() throws Exception {
        long deadline = System.nanoTime() + SETTLE_TIMEOUT_NS;
        while (!onLoop(this::allSettled) && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(SETTLE_POLL_NS);
        }
        return onLoop(() -> {
            Map<Integer, Map<String, Long>> flows = new HashMap<>();
            Map<String, Long> totals = new HashMap<>();
            java.util.List<String> notes = new java.util.ArrayList<>();
            for (int i = 0; i < writers.length; i++) {
                for (String note : writers[i].notes()) {
                    notes.add("tcp flow " + i + ": " + note);
                }
                Map<String, Long> flow = writers[i].report();
                flows.put(i, flow);
                flow.forEach((k, v) -> CounterDescriptor.addToTotal(totals, DECLARED, k, v));
            }
            return new TransportReport(totals, flows, notes);
        });
    }

    private boolean allSettled() {
        for (FlowWriter w : writers) {
            if (!w.settled()) {
                return false;
            }
        }
        return true;
    }

    private <T> T onLoop(Callable<T> task) throws Exception {
        return loop.submit(task).get(30, TimeUnit.SECONDS);
    }

    @Override
    public Map<String, Long> environment() {
        return environment;
    }

    /** Test seam: flow {@code flow}'s current connection. */
    Channel channel(int flow) throws Exception {
        return onLoop(writers[flow]::channel);
    }

    /**
     * Tells every writer the close is ours (not a failure) and closes the connections on the loop, then stops the
     * loop; bounded (see {@link Closing}): a loop that died or hangs must not hang the run's end. The group's
     * shutdown closes whatever is left.
     */
    @Override
    public void close() {
        Closing.closeAll(java.util.List.of(loop), l -> l.submit(() -> {
            if (punched != null) {
                punched.close();
            }
            for (FlowWriter w : writers) {
                w.closing();
                if (w.channel() != null) {
                    w.channel().close();
                }
            }
        }), () -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS));
    }
}
