package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.PacketSlots;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.wire.MessageHeader;

/**
 * A flow's writer that also notes each recorded data message's intended and actual send time ({@code --packets}),
 * for the rows of messages that never arrived. Runs on the sending thread: two array stores per accepted message,
 * no lock, no I/O, no allocation; read once the step's sending has ended.
 */
final class PacketWriter implements MessageWriter {
    private final MessageWriter writer;
    private final int every;
    private final int capacity;
    private final long[] intendedNs;
    private final long[] actualNs;

    PacketWriter(MessageWriter writer, int every, int capacity) {
        this.writer = writer;
        this.every = every;
        this.capacity = capacity;
        this.intendedNs = new long[capacity];
        this.actualNs = new long[capacity];
    }

    @Override
    public int write(long word0, long word1, long sequence, long intendedNs, long actualNs, long tag) {
        int outcome = writer.write(word0, word1, sequence, intendedNs, actualNs, tag);
        if (outcome == ACCEPTED && MessageHeader.kind(word0) == MessageHeader.KIND_DATA) {
            int slot = PacketSlots.slot(sequence, every, capacity);
            if (slot >= 0) {
                this.intendedNs[slot] = intendedNs;
                this.actualNs[slot] = actualNs;
            }
        }
        return outcome;
    }

    @Override
    public void flush() {
        writer.flush();
    }

    /** The send times noted, by slot (0 where nothing was accepted). */
    SentTimes times() {
        return new SentTimes(intendedNs, actualNs);
    }
}
