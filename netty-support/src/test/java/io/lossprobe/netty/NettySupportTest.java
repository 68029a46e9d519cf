package io.lossprobe.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.wire.MessageHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.Test;

class NettySupportTest {
    @Test
    void aMessageIsItsHeaderWordsAtTheirOffsetsThenZerosToItsLength() {
        ByteBuf b = Unpooled.buffer();
        b.writeByte(0x7f); // something before it: the message is appended, not written at 0
        ByteBufHeaders.writeMessage(b, 1, 2, 3, 4, 5, 6, 64);
        assertThat(b.readableBytes()).isEqualTo(1 + 64);
        assertThat(b.getLong(1 + MessageHeader.WORD0_OFFSET)).isEqualTo(1);
        assertThat(b.getLong(1 + MessageHeader.WORD1_OFFSET)).isEqualTo(2);
        assertThat(b.getLong(1 + MessageHeader.SEQUENCE_OFFSET)).isEqualTo(3);
        assertThat(b.getLong(1 + MessageHeader.SEND_TIME_OFFSET)).isEqualTo(4);
        assertThat(b.getLong(1 + MessageHeader.ACTUAL_SEND_TIME_OFFSET)).isEqualTo(5);
        assertThat(b.getLong(1 + MessageHeader.TAG_OFFSET)).isEqualTo(6);
        for (int i = 1 + MessageHeader.LENGTH; i < b.writerIndex(); i++) {
            assertThat(b.getByte(i)).isZero();
        }
    }

    @Test
    void theIoChoiceNamesTheOptionWhenTheValueIsNoneOfItsOwn() {
        assertThat(NettyIo.choose("tcp.io", "NIO")).isEqualTo(NettyIo.NIO);
        assertThat(NettyIo.choose("udp.io", null)).isEqualTo(Epoll.isAvailable() ? NettyIo.EPOLL : NettyIo.NIO);
        assertThatThrownBy(() -> NettyIo.choose("udp.io", "kqueue"))
            .hasMessage("udp.io must be auto, epoll or nio, not 'kqueue'");
    }

    /** One 64-byte message in a 4 KiB pooled GSO buffer holds 4 KiB; Netty's default estimate says 64. */
    @Test
    void aQueuedWriteIsSizedByTheMemoryItHoldsNotItsReadableBytes() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(4096);
        try {
            ByteBufHeaders.writeMessage(b, 1, 2, 3, 4, 5, 6, 64);
            assertThat(HeldMemoryEstimator.INSTANCE.newHandle().size(b)).isGreaterThanOrEqualTo(4096);
            DatagramPacket packet = new DatagramPacket(b, new InetSocketAddress("127.0.0.1", 9));
            assertThat(HeldMemoryEstimator.INSTANCE.newHandle().size(packet)).isGreaterThanOrEqualTo(4096);
            b.readerIndex(64); // what was written is gone: the memory stays held until the buffer is released
            assertThat(HeldMemoryEstimator.heldBytes(b)).isGreaterThanOrEqualTo(4096);
        } finally {
            b.release();
        }
        assertThat(HeldMemoryEstimator.heldBytes("not a buffer")).isZero();
    }
}
