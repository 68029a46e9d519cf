package io.lossprobe.benchmarks;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.accounting.SequenceTracker;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;

/**
 * {@link FlowReceiver#onMessage} per message: header validation, the sequence tracker, the delay and IPDV
 * histograms and RFC 3550 jitter - everything a receiver does per datagram after reading the four header words.
 */
public class FlowReceiverBenchmark extends HotPathBenchmark {
    private static final int RUN_ID = 42;
    private static final int LENGTH = 64;

    private final long word0 = MessageHeader.word0(MessageHeader.KIND_DATA, 3);
    private final long word1 = MessageHeader.word1(RUN_ID, 0, LENGTH);
    private final MessageAuth auth = new MessageAuth(0x0123456789abcdefL, 0x0fedcba987654321L);
    private FlowReceiver receiver;
    private long sequence;

    @Setup(Level.Iteration)
    public void setUp() {
        receiver = new FlowReceiver(3, RUN_ID, LENGTH, 1, false, auth);
        receiver.beginStep(0, SequenceTracker.windowFor(1_000_000, 2.0));
        sequence = 0;
    }

    /** The whole accounting of one message, its tag check included (the tag is made outside the measured cost). */
    @Benchmark
    public boolean onMessage() {
        long seq = sequence++;
        long sentNs = seq * 1_000;                          // 1M msg/s schedule
        long delayNs = 20_000 + (seq & 1023) * 50;          // 20-71 us, varying so jitter and IPDV do work
        return receiver.onMessage(word0, word1, seq, sentNs, sentNs, tags[(int) (seq & (TAGS - 1))], LENGTH,
            sentNs + delayNs);
    }

    private static final int TAGS = 1 << 16;
    private final long[] tags = new long[TAGS];

    {
        // The tags of the first 64k sequences; later ones repeat them and fail the check, so this benchmark runs
        // within its first 64k messages per iteration only if its iterations are short: the check costs the same.
        for (int seq = 0; seq < TAGS; seq++) {
            tags[seq] = auth.tag(word0, word1, seq, seq * 1_000L, seq * 1_000L);
        }
    }
}
