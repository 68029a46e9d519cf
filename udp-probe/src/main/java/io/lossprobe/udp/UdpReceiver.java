package io.lossprobe.udp;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.counters.ProcFiles;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageHeader;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One bound datagram socket per flow, all on one event loop, reading with recvmmsg (epoll) into one buffer
 * that holds {@value #DATAGRAMS_PER_READ} datagrams. Each datagram goes to its flow's {@link FlowReceiver}.
 */
final class UdpReceiver implements ReceiverEndpoint {
    static final int DATAGRAMS_PER_READ = 64;

    private final EventLoopGroup group;
    private final List<Channel> channels;
    private final int[] ports;
    private final Map<String, Long> environment;
    private volatile Map<Integer, Long> dropsAtWindowStart = Map.of();

    private UdpReceiver(EventLoopGroup group, List<Channel> channels, int[] ports, Map<String, Long> environment) {
        this.group = group;
        this.channels = channels;
        this.ports = ports;
        this.environment = environment;
    }

    static UdpReceiver open(ReceiverSpec spec) throws Exception {
        NettyIo io = NettyIo.choose(spec.option("udp.io", "auto"));
        int size = spec.plan().messageSize();
        int rcvbuf = UdpTransport.bufferOption(spec.options().get("rcvbuf"));
        EventLoopGroup group = io.newGroup("lossprobe-udp-rx");
        List<Channel> channels = new ArrayList<>();
        int[] ports = new int[spec.flows().length];
        try {
            for (int i = 0; i < spec.flows().length; i++) {
                FlowReceiver flow = spec.flows()[i];
                Bootstrap b = new Bootstrap().group(group).channel(io.datagramChannel())
                    .option(ChannelOption.SO_RCVBUF, rcvbuf)
                    .option(ChannelOption.RCVBUF_ALLOCATOR,
                        new FixedRecvByteBufAllocator(Math.max(size + 1, 2048) * DATAGRAMS_PER_READ))
                    .handler(new Handler(flow));
                if (io == NettyIo.EPOLL) {
                    // recvmmsg: one syscall fills the buffer with up to DATAGRAMS_PER_READ datagrams. One spare byte
                    // per slot so an oversized datagram shows as too long instead of being cut to look valid.
                    b.option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, Math.max(size + 1, 2048));
                }
                ports[i] = spec.plan().port(i);
                channels.add(b.bind(new InetSocketAddress(spec.bindAddress(), ports[i])).sync().channel());
            }
        } catch (Exception e) {
            for (Channel c : channels) {
                c.close();
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            throw new java.io.IOException("cannot bind UDP receivers on " + spec.bindAddress() + " ports "
                + spec.plan().basePort() + "-" + spec.plan().port(spec.flows().length - 1) + ": " + e.getMessage(), e);
        }
        Map<String, Long> env = new HashMap<>();
        env.put("receiveBufferRequested", (long) rcvbuf);
        env.put("receiveBufferGranted", (long) ((io.netty.channel.socket.DatagramChannelConfig)
            channels.get(0).config()).getReceiveBufferSize());
        env.put("io." + io.name().toLowerCase(java.util.Locale.ROOT), 1L);
        return new UdpReceiver(group, channels, ports, env);
    }

    @Override
    public void onReceiveThread(Runnable action) throws Exception {
        // All channels share the group's single event loop, so this runs between datagrams.
        group.next().submit(action).get(30, TimeUnit.SECONDS);
    }

    @Override
    public void setPaused(boolean paused) {
        for (Channel c : channels) {
            c.config().setAutoRead(!paused);
        }
    }

    /**
     * On loopback a datagram is queued (or dropped) inside the sender's own syscall, so drops sampled here, on the
     * sending thread after the last warm-up flush, exclude every warm-up datagram exactly.
     */
    @Override
    public void beginWindow() {
        dropsAtWindowStart = ProcFiles.readUdpDrops();
    }

    @Override
    public TransportReport endStep() {
        Map<Integer, Long> now = ProcFiles.readUdpDrops();
        Map<Integer, Map<String, Long>> flows = new HashMap<>();
        long total = 0;
        for (int i = 0; i < ports.length; i++) {
            long delta = now.getOrDefault(ports[i], 0L) - dropsAtWindowStart.getOrDefault(ports[i], 0L);
            flows.put(i, Map.of(TransportReport.SOCKET_DROPS, delta));
            total += delta;
        }
        return new TransportReport(Map.of("udp.receiverSocketDrops", total), flows);
    }

    @Override
    public Map<String, Long> environment() {
        return environment;
    }

    @Override
    public void close() {
        for (Channel c : channels) {
            c.close().syncUninterruptibly();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Hands each datagram's header words to the flow's accounting; a short datagram is passed as corrupt. */
    private static final class Handler extends ChannelInboundHandlerAdapter {
        private final FlowReceiver flow;

        Handler(FlowReceiver flow) {
            this.flow = flow;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            DatagramPacket packet = (DatagramPacket) msg;
            try {
                ByteBuf b = packet.content();
                int length = b.readableBytes();
                long now = System.nanoTime();
                if (length < MessageHeader.LENGTH) {
                    flow.onMessage(0, 0, 0, 0, length, now);
                    return;
                }
                int at = b.readerIndex();
                flow.onMessage(b.getLong(at + MessageHeader.WORD0_OFFSET), b.getLong(at + MessageHeader.WORD1_OFFSET),
                    b.getLong(at + MessageHeader.SEQUENCE_OFFSET), b.getLong(at + MessageHeader.SEND_TIME_OFFSET),
                    length, now);
            } finally {
                packet.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // A receive error (e.g. ICMP feedback) must not close the socket mid-step; the counts show the effect.
        }
    }
}
