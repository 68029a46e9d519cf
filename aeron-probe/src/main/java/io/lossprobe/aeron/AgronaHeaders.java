package io.lossprobe.aeron;

import io.lossprobe.core.wire.MessageHeader;
import java.nio.ByteOrder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The message header ({@link MessageHeader}, docs/wire-format.md) in an Agrona buffer: the one place the Aeron
 * transport lays a header out and reads one back. Big-endian, as the header defines it (Agrona buffers default to
 * little-endian).
 */
final class AgronaHeaders {
    private AgronaHeaders() {
    }

    /** Writes the six header words at {@code at}; the rest of the message is left as the buffer holds it. */
    static void put(MutableDirectBuffer b, int at, long word0, long word1, long sequence, long intendedNs,
                    long actualNs, long tag) {
        b.putLong(at + MessageHeader.WORD0_OFFSET, word0, ByteOrder.BIG_ENDIAN);
        b.putLong(at + MessageHeader.WORD1_OFFSET, word1, ByteOrder.BIG_ENDIAN);
        b.putLong(at + MessageHeader.SEQUENCE_OFFSET, sequence, ByteOrder.BIG_ENDIAN);
        b.putLong(at + MessageHeader.SEND_TIME_OFFSET, intendedNs, ByteOrder.BIG_ENDIAN);
        b.putLong(at + MessageHeader.ACTUAL_SEND_TIME_OFFSET, actualNs, ByteOrder.BIG_ENDIAN);
        b.putLong(at + MessageHeader.TAG_OFFSET, tag, ByteOrder.BIG_ENDIAN);
    }

    /** One header word at {@code wordOffset} of the message at {@code at}. */
    static long get(DirectBuffer b, int at, int wordOffset) {
        return b.getLong(at + wordOffset, ByteOrder.BIG_ENDIAN);
    }
}
