package io.lossprobe.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.wire.MessageHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
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
}
