package io.lossprobe.netty;

import io.lossprobe.core.wire.MessageHeader;
import io.netty.buffer.ByteBuf;

/**
 * The message header ({@link MessageHeader}, docs/wire-format.md) written into a Netty buffer: the one place the
 * UDP and TCP transports lay a message out. Big-endian, as ByteBuf writes longs.
 */
public final class ByteBufHeaders {
    private ByteBufHeaders() {
    }

    /**
     * Appends one whole message: the six header words, then zeros up to {@code messageLength}.
     *
     * @param intendedNs the intended send time (header word "send time")
     * @param actualNs   the actual send time
     */
    public static ByteBuf writeMessage(ByteBuf b, long word0, long word1, long sequence, long intendedNs,
                                       long actualNs, long tag, int messageLength) {
        return b.writeLong(word0).writeLong(word1).writeLong(sequence).writeLong(intendedNs).writeLong(actualNs)
            .writeLong(tag).writeZero(messageLength - MessageHeader.LENGTH);
    }
}
