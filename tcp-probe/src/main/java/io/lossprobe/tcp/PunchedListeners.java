package io.lossprobe.tcp;

import io.lossprobe.core.plan.Addresses;
import io.lossprobe.core.transport.FlowsReached;
import io.lossprobe.core.wire.Punch;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * TCP senders whose receivers are behind a NAT ({@code SenderSpec.behindNat}): nothing can connect to those, so
 * each flow's sender listens on a port of its own ({@link #ports}) and its receiver connects out to it, through the
 * NAT, its first {@value Punch#BYTES} bytes the flow's {@link Punch}. An accepted connection becomes the flow's data
 * connection only when it comes from the target's address (the NAT's) and its first bytes, read within
 * {@link #READ_DEADLINE_NS}, are exactly this run's pass's punch for this flow. Anything else is reset without a
 * byte written to it: another address, a token that is short, long, altered, another flow's or another run's, one
 * more connection for a flow that has its own, or more than {@link #PENDING_PER_FLOW} unverified at once. Once
 * every flow has its connection the listeners and whatever is still unverified close.
 *
 * <p>Listeners and connections run on the sender's event loop, before any step (a step cannot begin until every
 * flow has its connection, and the listeners are closed by then); {@link FlowsReached} hands the verified flows
 * to {@link #await} on the engine's thread.
 */
final class PunchedListeners {
    /** How long an accepted connection may take to deliver its punch. */
    static final long READ_DEADLINE_NS = TimeUnit.SECONDS.toNanos(1);
    /** Unverified connections a flow holds at once; more are reset at once (a flood costs no descriptors). */
    static final int PENDING_PER_FLOW = 4;

    private final Punch punch;
    private final InetAddress from;
    private final EventLoop loop;
    /** Runs on the loop for a verified connection: makes it the flow's data connection. */
    private final BiConsumer<Integer, Channel> onVerified;
    private final List<Channel> listeners = new ArrayList<>();
    private final int[] ports;
    /** Per flow, the accepted connections whose punch is not read yet. Loop only. */
    private final List<Set<Channel>> pending = new ArrayList<>();
    /** Loop only: the listeners are closed (every flow verified, or the sender closes). */
    private boolean done;
    /** Connections reset without becoming a flow's. Loop only. */
    private long refused;

    private final FlowsReached verified;

    private PunchedListeners(Punch punch, InetAddress from, EventLoop loop, int flows,
                             BiConsumer<Integer, Channel> onVerified) {
        this.punch = punch;
        this.from = from;
        this.loop = loop;
        this.onVerified = onVerified;
        this.ports = new int[flows];
        this.verified = new FlowsReached(flows);
        for (int i = 0; i < flows; i++) {
            pending.add(new HashSet<>());
        }
    }

    /**
     * Binds one listener per flow on an ephemeral port of {@code local} (null: every address of the target's
     * family).
     *
     * @param bootstrap  the data connections' options ({@code childOption}s) and the listeners' own, group and
     *                   channel class set; a flow's class ({@code tos}) is added here
     * @param tosOf      each flow's IP_TOS, or -1
     * @param onVerified runs on {@code loop} with each flow's verified connection
     */
    static PunchedListeners open(ServerBootstrap bootstrap, EventLoop loop, Punch punch, InetAddress from,
                                 String local, int flows, java.util.function.IntUnaryOperator tosOf, boolean epoll,
                                 BiConsumer<Integer, Channel> onVerified) throws Exception {
        PunchedListeners p = new PunchedListeners(punch, from, loop, flows, onVerified);
        boolean v6 = from instanceof java.net.Inet6Address;
        try {
            for (int i = 0; i < flows; i++) {
                ServerBootstrap b = bootstrap.clone().childHandler(p.verifier(i));
                int tos = tosOf.applyAsInt(i);
                if (tos >= 0) {
                    // The data connection's class, and the listener's for the SYN-ACK (epoll only: see TcpReceiver).
                    b.childOption(ChannelOption.IP_TOS, tos);
                    if (epoll) {
                        b.option(TcpReceiver.LISTENER_IP_TOS, tos);
                        if (v6) {
                            b.option(TcpReceiver.LISTENER_IPV6_TCLASS, tos);
                        }
                    }
                }
                String at = local != null ? local : v6 ? "::" : "0.0.0.0";
                Channel listener = b.bind(new InetSocketAddress(at, 0)).sync().channel();
                p.listeners.add(listener);
                p.ports[i] = ((InetSocketAddress) listener.localAddress()).getPort();
            }
        } catch (Exception e) {
            for (Channel l : p.listeners) {
                l.close();
            }
            throw e;
        }
        return p;
    }

    /** The port each flow's receiver connects to. */
    int[] ports() {
        return ports.clone();
    }

    /** The flows without a verified connection yet. */
    int[] missing() {
        return verified.missing();
    }

    /** Waits until every flow has its connection or {@code timeoutNs} passed; returns the flows without one. */
    int[] await(long timeoutNs) throws InterruptedException {
        return verified.await(timeoutNs);
    }

    /** Connections reset so far without becoming a flow's (for tests; on the loop). */
    long refused() throws Exception {
        return loop.submit(() -> refused).get(30, TimeUnit.SECONDS);
    }

    /** Closes the listeners and every unverified connection; on the loop. */
    void close() {
        done = true;
        for (Channel l : listeners) {
            l.close();
        }
        for (Set<Channel> flow : pending) {
            for (Channel c : List.copyOf(flow)) {
                reset(c);
            }
        }
    }

    private ChannelInitializer<SocketChannel> verifier(int flow) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                Set<Channel> waiting = pending.get(flow);
                InetAddress peer = ch.remoteAddress().getAddress();
                if (done || verified.has(flow) || !Addresses.sameHost(peer, from)
                    || waiting.size() >= PENDING_PER_FLOW) {
                    reset(ch);
                    return;
                }
                waiting.add(ch);
                ch.closeFuture().addListener(f -> waiting.remove(ch));
                ch.pipeline().addLast(new PunchReader(flow));
            }
        };
    }

    /** An abort (SO_LINGER 0: a RST, no TIME_WAIT left behind); nothing was or will be written to it. */
    private void reset(Channel ch) {
        refused++;
        ch.config().setOption(ChannelOption.SO_LINGER, 0);
        ch.close();
    }

    /** Reads an accepted connection's first bytes: exactly the flow's punch, within the deadline, or a reset. */
    private final class PunchReader extends ChannelInboundHandlerAdapter {
        private final int flow;
        private final byte[] token = new byte[Punch.BYTES];
        private int have;
        private ScheduledFuture<?> deadline;

        PunchReader(int flow) {
            this.flow = flow;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            deadline = ctx.executor().schedule(() -> reject(ctx), READ_DEADLINE_NS, TimeUnit.NANOSECONDS);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (!(msg instanceof ByteBuf bytes) || have + bytes.readableBytes() > Punch.BYTES) {
                    reject(ctx); // longer than a punch: no receiver writes more before the sender does
                    return;
                }
                int n = bytes.readableBytes();
                bytes.readBytes(token, have, n);
                have += n;
            } finally {
                ReferenceCountUtil.release(msg);
            }
            if (have < Punch.BYTES) {
                return;
            }
            deadline.cancel(false);
            if (done || punch.flowOf(token, 0, Punch.BYTES) != flow || verified.has(flow)) {
                reject(ctx);
                return;
            }
            pending.get(flow).remove(ctx.channel());
            ctx.pipeline().remove(this);
            onVerified.accept(flow, ctx.channel());
            verified.mark(flow);
            if (verified.missing().length == 0) {
                close();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            reject(ctx);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            deadline.cancel(false);
            ctx.fireChannelInactive();
        }

        private void reject(ChannelHandlerContext ctx) {
            deadline.cancel(false);
            if (ctx.channel().isOpen()) {
                reset(ctx.channel());
            }
        }
    }
}
