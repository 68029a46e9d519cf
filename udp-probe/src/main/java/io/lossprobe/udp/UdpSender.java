package io.lossprobe.udp;

import io.lossprobe.core.pacing.SendLoop;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.wire.MessageHeader;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One connected datagram socket per flow, all on one event loop that also runs the send loop: writes queue in
 * Netty's outbound buffer and each flow's flush goes out as one sendmmsg.
 */
final class UdpSender implements SenderEndpoint {
    /** Below this the loop runs again at once instead of arming a timer. */
    private static final long SPIN_NS = 10_000;

    private final EventLoopGroup group;
    private final EventLoop loop;
    private final List<Channel> channels;
    private final Writer[] writers;
    private final Map<String, Long> environment;

    private UdpSender(EventLoopGroup group, List<Channel> channels, Writer[] writers, Map<String, Long> env) {
        this.group = group;
        this.loop = group.next();
        this.channels = channels;
        this.writers = writers;
        this.environment = env;
    }

    static UdpSender open(SenderSpec spec) throws Exception {
        NettyIo io = NettyIo.choose(spec.option("udp.io", "auto"));
        int sndbuf = UdpTransport.bufferOption(spec.options().get("sndbuf"));
        int flows = spec.plan().ports();
        EventLoopGroup group = io.newGroup("lossprobe-udp-tx");
        List<Channel> channels = new ArrayList<>();
        Writer[] writers = new Writer[flows];
        try {
            for (int i = 0; i < flows; i++) {
                Writer writer = new Writer(spec.plan().messageSize());
                Bootstrap b = new Bootstrap().group(group).channel(io.datagramChannel())
                    .option(ChannelOption.SO_SNDBUF, sndbuf)
                    // Bounded memory: past 1 MiB queued the flow reports BLOCKED and falls behind instead.
                    .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(256 * 1024, 1024 * 1024))
                    .handler(writer);
                Channel ch = b.connect(new InetSocketAddress(spec.targetHost(), spec.plan().port(i))).sync().channel();
                writer.channel = ch;
                channels.add(ch);
                writers[i] = writer;
            }
        } catch (Exception e) {
            for (Channel c : channels) {
                c.close();
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            throw new java.io.IOException("cannot open UDP senders to " + spec.targetHost() + ": " + e.getMessage(), e);
        }
        Map<String, Long> env = new HashMap<>();
        env.put("sendBufferRequested", (long) sndbuf);
        env.put("sendBufferGranted", (long) ((io.netty.channel.socket.DatagramChannelConfig)
            channels.get(0).config()).getSendBufferSize());
        return new UdpSender(group, channels, writers, env);
    }

    @Override
    public MessageWriter writer(int flow) {
        return writers[flow];
    }

    @Override
    public CompletableFuture<Void> drive(SendLoop sendLoop) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        loop.execute(new Runnable() {
            @Override
            public void run() {
                try {
                    sendLoop.doWork(System.nanoTime());
                    if (sendLoop.isDone()) {
                        done.complete(null);
                        return;
                    }
                    long now = System.nanoTime();
                    long wait = sendLoop.nextDueNs(now) - now;
                    if (wait <= SPIN_NS) {
                        loop.execute(this);
                    } else {
                        loop.schedule(this, wait, TimeUnit.NANOSECONDS);
                    }
                } catch (Throwable t) {
                    done.completeExceptionally(t);
                }
            }
        });
        return done;
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

    /**
     * Writes one message as one datagram. Errors of an accepted write arrive later through exceptionCaught (the
     * void promise fires them there) and are counted as failed after accept.
     */
    static final class Writer extends ChannelInboundHandlerAdapter implements MessageWriter {
        private final int size;
        private final byte[] padding;
        private Channel channel;
        private long failedAfterAccept;

        Writer(int size) {
            this.size = size;
            this.padding = new byte[size - MessageHeader.LENGTH];
        }

        @Override
        public int write(long word0, long word1, long sequence, long sendTimeNs) {
            if (!channel.isWritable()) {
                return BLOCKED;
            }
            ByteBuf buf = ByteBufAllocator.DEFAULT.directBuffer(size, size);
            buf.writeLong(word0).writeLong(word1).writeLong(sequence).writeLong(sendTimeNs).writeBytes(padding);
            channel.write(buf, channel.voidPromise());
            return ACCEPTED;
        }

        @Override
        public void flush() {
            channel.flush();
        }

        @Override
        public long failedAfterAccept() {
            return failedAfterAccept;
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            failedAfterAccept++;
        }
    }
}
