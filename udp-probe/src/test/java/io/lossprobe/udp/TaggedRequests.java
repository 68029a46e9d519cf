package io.lossprobe.udp;

import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import java.nio.ByteBuffer;

/** Echo requests as a run's sender makes them, for tests that play the sender (or a forger) on a real socket. */
final class TaggedRequests {
    private TaggedRequests() {
    }

    /**
     * A 64-byte message of {@code kind} for flow 0, step 0 of run {@code runId}, sequence {@code seq}, sent now,
     * tagged under {@code key}.
     */
    static byte[] of(MessageAuth key, int runId, int kind, long seq) {
        long w0 = MessageHeader.word0(kind, 0);
        long w1 = MessageHeader.word1(runId, 0, 64);
        long t = System.nanoTime();
        ByteBuffer b = ByteBuffer.allocate(64);
        b.putLong(w0).putLong(w1).putLong(seq).putLong(t).putLong(t).putLong(key.tag(w0, w1, seq, t, t));
        return b.array();
    }
}
