package io.lossprobe.benchmarks;

import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import java.nio.ByteBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * The 48-byte message header: encoding it into a direct buffer the way a sender does (big-endian longs) and
 * decoding plus validating it the way a receiver does. One operation is one message.
 */
public class HeaderCodecBenchmark extends HotPathBenchmark {
    private static final int RUN_ID = 0x1234_5678;
    private static final int STEP = 2;
    private static final int LENGTH = 64;

    private final ByteBuffer buffer = ByteBuffer.allocateDirect(LENGTH);
    private final MessageAuth auth = new MessageAuth(0x0123456789abcdefL, 0x0fedcba987654321L);
    private long sequence;
    private long sendTimeNs = 1_000_000_000L;

    @Setup
    public void setUp() {
        encode();
    }

    @Benchmark
    public ByteBuffer encode() {
        long seq = sequence++;
        buffer.putLong(MessageHeader.WORD0_OFFSET, MessageHeader.word0(MessageHeader.KIND_DATA, 7))
            .putLong(MessageHeader.WORD1_OFFSET, MessageHeader.word1(RUN_ID, STEP, LENGTH))
            .putLong(MessageHeader.SEQUENCE_OFFSET, seq)
            .putLong(MessageHeader.SEND_TIME_OFFSET, sendTimeNs + seq)
            .putLong(MessageHeader.ACTUAL_SEND_TIME_OFFSET, sendTimeNs + seq);
        return buffer;
    }

    /** The sender's cost of authenticating one message: its SipHash-2-4 tag over the first five words. */
    @Benchmark
    public long tag() {
        long seq = sequence++;
        return auth.tag(MessageHeader.word0(MessageHeader.KIND_DATA, 7), MessageHeader.word1(RUN_ID, STEP, LENGTH),
            seq, sendTimeNs + seq, sendTimeNs + seq);
    }

    /** Reads the four words and applies the receiver's checks (magic, version, run, flow, length, kind). */
    @Benchmark
    public long decodeAndValidate() {
        long word0 = buffer.getLong(MessageHeader.WORD0_OFFSET);
        long word1 = buffer.getLong(MessageHeader.WORD1_OFFSET);
        long seq = buffer.getLong(MessageHeader.SEQUENCE_OFFSET);
        long sent = buffer.getLong(MessageHeader.SEND_TIME_OFFSET);
        boolean valid = MessageHeader.isLossprobe(word0) && MessageHeader.runId(word1) == RUN_ID
            && MessageHeader.flowId(word0) == 7 && MessageHeader.length(word1) == LENGTH
            && MessageHeader.kind(word0) == MessageHeader.KIND_DATA && MessageHeader.step(word1) == STEP;
        return valid ? seq ^ sent : -1;
    }
}
