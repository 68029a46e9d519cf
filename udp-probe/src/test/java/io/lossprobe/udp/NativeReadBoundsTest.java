package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The native read writes datagrams where its arguments say. They are checked in Java before it runs: a heap
 * buffer, a slot too small for a header, a count outside 1..MAX_BATCH, or slots that do not fit their buffer is an
 * IllegalArgumentException (a negative slot size used to pass the capacity check and reach recvmmsg as an
 * iovec of 2^64 - 1 bytes). A datagram longer than its slot comes back marked MSG_TRUNC.
 */
class NativeReadBoundsTest {
    /** How long a read waits for a datagram that should come. */
    private static final long WAIT_NS = 100_000_000L;
    private static final int SLOT = 72;
    private int epfd;
    private final ByteBuffer slots = ByteBuffer.allocateDirect(NativeUdp.MAX_BATCH * SLOT);
    private final ByteBuffer meta = ByteBuffer.allocateDirect(NativeUdp.META_BUFFER_BYTES)
        .order(ByteOrder.nativeOrder());

    @BeforeEach
    void nativePiece() {
        assumeTrue(NativeUdp.class.getResource(NativeUdp.RESOURCE) != null, "built without the native piece");
        assertThat(NativeUdp.available()).as(String.valueOf(NativeUdp.unavailableBecause())).isTrue();
        epfd = NativeUdp.epollCreate(); // no socket in it: a read that got through would find nothing
        assertThat(epfd).isNotNegative();
    }

    @Test
    void badArgumentsAreRefusedBeforeTheNativeRead() {
        assertThatThrownBy(() -> NativeUdp.readStampedNs(epfd, 0, ByteBuffer.allocate(SLOT * 4), SLOT, 4, meta))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("direct");
        for (int slot : new int[] {-1, 0, 47, Integer.MIN_VALUE}) {
            assertThatThrownBy(() -> NativeUdp.readStampedNs(epfd, 0, slots, slot, 1, meta)).as("slot %d", slot)
                .isInstanceOf(IllegalArgumentException.class);
        }
        for (int count : new int[] {-1, 0, NativeUdp.MAX_BATCH + 1}) {
            assertThatThrownBy(() -> NativeUdp.readStampedNs(epfd, 0, slots, SLOT, count, meta)).as("count %d", count)
                .isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> NativeUdp.readStampedNs(epfd, 0, slots, Integer.MAX_VALUE / 2, 4, meta))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("slots of");
        assertThatThrownBy(() -> NativeUdp.readStampedNs(epfd, 0, slots, SLOT, NativeUdp.MAX_BATCH,
            ByteBuffer.allocateDirect(64))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> NativeUdp.readStampedNs(epfd, -1, slots, SLOT, NativeUdp.MAX_BATCH, meta))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("wait");
        assertThat(NativeUdp.readStampedNs(epfd, 0, slots, SLOT, NativeUdp.MAX_BATCH, meta)).isZero();
    }

    /**
     * A wait shorter than a millisecond lasts that long, not a millisecond (epoll_pwait2; epoll_wait's timeout is in
     * whole milliseconds): an echo responder sleeps until 20 us before its next request is due. The shortest of
     * twenty waits of 200 us, so a busy host's late wake-ups do not decide it.
     */
    @Test
    void aWaitIsToTheMicrosecond() {
        long shortest = Long.MAX_VALUE;
        for (int i = 0; i < 20; i++) {
            long start = System.nanoTime();
            assertThat(NativeUdp.readStampedNs(epfd, 200_000, slots, SLOT, NativeUdp.MAX_BATCH, meta)).isZero();
            shortest = Math.min(shortest, System.nanoTime() - start);
        }
        assertThat(shortest).isBetween(200_000L, 900_000L);
    }

    /** A datagram longer than its slot: the record says MSG_TRUNC, the length is the slot's. Port 44670 only. */
    @Test
    @Tag("system")
    @Timeout(30)
    void aDatagramLongerThanItsSlotIsMarkedTruncated() throws Exception {
        EventLoopGroup group = NettyIo.EPOLL.newGroup("test-rx", 1);
        try {
            Channel channel = new Bootstrap().group(group).channel(EpollDatagramChannel.class)
                .option(ChannelOption.AUTO_READ, false).handler(new ChannelInboundHandlerAdapter())
                .bind(new InetSocketAddress("127.0.0.1", 44670)).sync().channel();
            int fd = ((EpollDatagramChannel) channel).fd().intValue();
            assertThat(NativeUdp.epollAdd(epfd, fd, 3)).isZero();
            try (DatagramSocket sender = new DatagramSocket(0, InetAddress.getByName("127.0.0.1"))) {
                sender.send(new DatagramPacket(new byte[SLOT - 1], SLOT - 1, InetAddress.getByName("127.0.0.1"),
                    44670));
                sender.send(new DatagramPacket(new byte[500], 500, InetAddress.getByName("127.0.0.1"), 44670));
                int read = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (read < 2 && System.nanoTime() < deadline) {
                    int n = NativeUdp.readStampedNs(epfd, WAIT_NS, slots, SLOT, 2 - read, meta);
                    assertThat(n).isNotNegative();
                    for (int k = 0; k < n; k++) {
                        int m = k * NativeUdp.META_BYTES;
                        int segment = meta.getInt(m + NativeUdp.META_SEGMENT);
                        int length = meta.getInt(m + NativeUdp.META_LENGTH);
                        if (read + k == 0) {
                            assertThat(length).isEqualTo(SLOT - 1);
                            assertThat(segment).isZero();
                        } else {
                            assertThat(length).isEqualTo(SLOT);
                            assertThat(segment).isEqualTo(NativeUdp.SEGMENT_TRUNCATED);
                        }
                    }
                    read += n;
                }
                assertThat(read).isEqualTo(2);
            }
            channel.close().syncUninterruptibly();
        } finally {
            NativeUdp.close(epfd);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
