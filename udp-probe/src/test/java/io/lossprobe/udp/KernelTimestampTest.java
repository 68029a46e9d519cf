package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.netty.NettyIo;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollDatagramChannel;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The native piece's kernel receive timestamps on a real socket: present for every datagram, converted to
 * {@link System#nanoTime()}'s clock by a {@link RealtimeToMonotonic} fed with the reads' clock samples, inside the send
 * call that queued the datagram on loopback, and never after the moment the receiving thread read it. Should the
 * realtime clock be stepped while the test runs, a stamp the converter counts as doubtful may be late (by at most the
 * step), never early.
 */
@Tag("system")
class KernelTimestampTest {
    /** How long a read waits for a datagram that should come. */
    private static final long WAIT_NS = 100_000_000L;
    private static final int PORT = 47300;
    private static final int SLOT = 72;
    private EventLoopGroup group;
    private Channel channel;

    @BeforeEach
    void bind() throws Exception {
        // A build without gcc has no native piece: then the fallback is what runs, tested elsewhere. With the piece
        // in the build it must load.
        assumeTrue(NativeUdp.class.getResource(NativeUdp.RESOURCE) != null, "built without the native piece");
        assertThat(NativeUdp.available()).as(String.valueOf(NativeUdp.unavailableBecause())).isTrue();
        group = NettyIo.EPOLL.newGroup("test-rx", 1);
        channel = new Bootstrap().group(group).channel(EpollDatagramChannel.class)
            .option(ChannelOption.AUTO_READ, false).option(ChannelOption.SO_RCVBUF, 4 << 20)
            .handler(new ChannelInboundHandlerAdapter())
            .bind(new InetSocketAddress("127.0.0.1", PORT)).sync().channel();
    }

    @AfterEach
    void close() {
        if (channel != null) {
            channel.close().syncUninterruptibly();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /**
     * Enabling SO_TIMESTAMPNS on the host's first stamping socket turns the kernel's arrival stamping on from a
     * workqueue (net_enable_timestamp defers the static key to netstamp_work): until a kworker runs it, the kernel
     * stamps a datagram when it is read, not when it arrived. On a busy host that took 26.9 ms once. So probes go
     * first, until one is stamped inside its send call, or 10 s pass.
     */
    private static void awaitArrivalStamps(DatagramSocket sender, int epfd, ByteBuffer slots, ByteBuffer meta,
                                           RealtimeToMonotonic clock) throws Exception {
        byte[] probe = new byte[64];
        ByteBuffer.wrap(probe).putInt(0, -1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            sender.send(new DatagramPacket(probe, probe.length, InetAddress.getByName("127.0.0.1"), PORT));
            long sentBy = System.nanoTime();
            int n = NativeUdp.readStampedNs(epfd, WAIT_NS, slots, SLOT, NativeUdp.MAX_BATCH, meta);
            assertThat(n).isNotNegative();
            clock.readTaken(meta);
            boolean armed = false;
            for (int k = 0; k < n; k++) {
                assertThat(slots.getInt(k * SLOT)).as("only probes so far").isEqualTo(-1);
                long realtimeNs = meta.getLong(k * NativeUdp.META_BYTES + NativeUdp.META_REALTIME_NS);
                armed |= realtimeNs != NativeUdp.NO_STAMP && clock.toMonotonic(realtimeNs) <= sentBy;
            }
            if (armed) {
                return;
            }
        }
        throw new AssertionError("the kernel never stamped a probe on arrival within 10 s");
    }

    @Test
    @Timeout(30)
    void everyDatagramIsStampedInsideItsSendCallAndBeforeItWasRead() throws Exception {
        int fd = ((EpollDatagramChannel) channel).fd().intValue();
        int epfd = NativeUdp.epollCreate();
        assertThat(epfd).isNotNegative();
        assertThat(NativeUdp.enableTimestamps(fd)).isZero();
        assertThat(NativeUdp.epollAdd(epfd, fd, 5)).isZero();
        int count = 300;
        long[] before = new long[count];
        long[] after = new long[count];
        ByteBuffer slots = ByteBuffer.allocateDirect(NativeUdp.MAX_BATCH * SLOT);
        ByteBuffer meta = ByteBuffer.allocateDirect(NativeUdp.META_BUFFER_BYTES).order(ByteOrder.nativeOrder());
        RealtimeToMonotonic clock = new RealtimeToMonotonic();
        // A read of nothing before the sends, as a reader's loop does: the clocks' offset before any arrival.
        assertThat(NativeUdp.readStampedNs(epfd, 0, slots, SLOT, NativeUdp.MAX_BATCH, meta)).isZero();
        clock.readTaken(meta);
        try (DatagramSocket sender = new DatagramSocket(0, InetAddress.getByName("127.0.0.1"))) {
            awaitArrivalStamps(sender, epfd, slots, meta, clock);
            byte[] payload = new byte[64];
            for (int i = 0; i < count; i++) {
                ByteBuffer.wrap(payload).putInt(0, i);
                DatagramPacket p = new DatagramPacket(payload, payload.length, InetAddress.getByName("127.0.0.1"),
                    PORT);
                before[i] = System.nanoTime();
                sender.send(p);
                after[i] = System.nanoTime();
            }
            int read = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (read < count && System.nanoTime() < deadline) {
                int n = NativeUdp.readStampedNs(epfd, WAIT_NS, slots, SLOT, NativeUdp.MAX_BATCH, meta);
                long userNs = System.nanoTime(); // the receiving thread's own time, as the fallback would stamp
                assertThat(n).isNotNegative();
                clock.readTaken(meta);
                for (int k = 0; k < n; k++) {
                    int m = k * NativeUdp.META_BYTES;
                    int i = slots.getInt(k * SLOT);
                    long realtimeNs = meta.getLong(m + NativeUdp.META_REALTIME_NS);
                    assertThat(meta.getInt(m + NativeUdp.META_TOKEN)).isEqualTo(5);
                    assertThat(meta.getInt(m + NativeUdp.META_LENGTH)).isEqualTo(64);
                    assertThat(meta.getShort(m + NativeUdp.META_PORT) & 0xFFFF).isEqualTo(sender.getLocalPort());
                    assertThat(realtimeNs).as("datagram %d has a kernel stamp", i).isNotEqualTo(NativeUdp.NO_STAMP);
                    long doubtfulBefore = clock.doubtful();
                    long kernelNs = clock.toMonotonic(realtimeNs);
                    // Loopback queues the datagram inside the sender's own call, where the kernel stamps it.
                    assertThat(kernelNs).as("datagram %d: kernel stamp not before its send call", i)
                        .isGreaterThanOrEqualTo(before[i]);
                    if (clock.doubtful() == doubtfulBefore) {
                        assertThat(kernelNs).as("datagram %d: kernel stamp within its send call", i)
                            .isLessThanOrEqualTo(after[i]);
                    }
                    assertThat(kernelNs).as("datagram %d: kernel time <= user time", i).isLessThanOrEqualTo(userNs);
                }
                read += n;
            }
            assertThat(read).isEqualTo(count);
        } finally {
            NativeUdp.close(epfd);
        }
    }

    @Test
    void perThreadSettingsTakeOnTheCallingThread() throws Exception {
        long[] seen = new long[1];
        Thread t = new Thread(() -> {
            NativeUdp.setTimerSlack(1);
            seen[0] = NativeUdp.timerSlack();
        });
        t.start();
        t.join(10_000);
        assertThat(seen[0]).isEqualTo(1);
        assertThat(NativeUdp.timerSlack()).as("this thread keeps Linux's default").isEqualTo(50_000);
        assertThat(NativeUdp.pinToCpu(1 << 20)).as("no such CPU").isNegative();
    }

    /**
     * udp.sliceNs: the slice a thread asks for is the one the kernel reports back for that thread alone (Linux 6.12
     * and later keep a fair task's custom slice; older kernels take the call and report 0), and its nice is kept.
     */
    @Test
    void aSliceAskedForIsTheCallingThreadsAlone() throws Exception {
        long[] seen = new long[2];
        Thread t = new Thread(() -> {
            ThreadTuning tuning = ThreadTuning.of(java.util.Map.of("udp.sliceNs", "200000"), true, 0);
            tuning.applyToCurrentThread();
            seen[0] = tuning.sliceNs();
            seen[1] = NativeUdp.slice();
        });
        t.start();
        t.join(10_000);
        boolean customSlices = kernelAtLeast(6, 12);
        assertThat(seen[0]).as("read back by the tuned thread").isEqualTo(customSlices ? 200_000L : 0L)
            .isEqualTo(seen[1]);
        assertThat(NativeUdp.slice()).as("this thread keeps the kernel's").isNotEqualTo(200_000L);
        assertThat(ThreadTuning.of(java.util.Map.of("udp.sliceNs", "200000"), false, 0).sliceNs())
            .as("only the precision mode asks").isEqualTo(-1);
    }

    private static boolean kernelAtLeast(int major, int minor) {
        String[] v = System.getProperty("os.version").split("[.-]");
        int ma = Integer.parseInt(v[0]);
        return ma > major || ma == major && Integer.parseInt(v[1]) >= minor;
    }
}
