package io.lossprobe.core.accounting;

/**
 * One flow's per-message record of one step ({@code run --packets}): for every recorded wire sequence number, what
 * happened to it at the receiver. A sequence number is recorded when it is a multiple of {@link #every()} and its
 * slot ({@code sequence / every}) is below {@link #capacity()}; everything is allocated up front, so the receiving
 * thread only stores into arrays (no allocation, no lock, no I/O).
 *
 * <p>Written by the flow's receiving thread, read once that thread has stopped (the receivers closed). Arrivals
 * after the step closed are appended in the order they were counted, each with its rank among the step's counted
 * after-close arrivals of its kind, so a reader can take exactly those the step's result counted (the result is
 * frozen while the receivers still run: a straggler after that is in neither).
 */
public final class PacketSlots {
    /** Heap bytes a row costs: three times, a state, two counters, and one after-close entry. */
    public static final int BYTES_PER_ROW = 3 * Long.BYTES + 1 + 2 * Integer.BYTES + Integer.BYTES + 1 + Long.BYTES;

    public static final byte NONE = 0;
    public static final byte RECEIVED = 1;
    public static final byte REORDERED = 2;
    /** A first arrival behind the tracking window while the step was open: lost, and late. */
    public static final byte LATE = 3;

    /** After-close entry kinds. */
    public static final byte AFTER_LATE = 1;
    public static final byte AFTER_LATE_DUPLICATE = 2;

    private final int every;
    private final int capacity;
    private final long[] intendedNs;
    private final long[] actualNs;
    /** Arrival time on the sender's clock (the step's clock offset taken out), as the delay histogram has it. */
    private final long[] arrivalNs;
    private final byte[] state;
    private final int[] duplicates;
    private final int[] lateDuplicates;
    private final int[] afterSlot;
    private final byte[] afterKind;
    private final long[] afterRank;
    private int afterCount;
    private long afterOverflow;
    private long trackerLate;
    private long trackerLateDuplicates;

    /**
     * @param every    record every {@code every}-th sequence number (1: all)
     * @param capacity rows at most
     */
    public PacketSlots(int every, int capacity) {
        if (every < 1 || capacity < 0) {
            throw new IllegalArgumentException("every " + every + ", capacity " + capacity);
        }
        this.every = every;
        this.capacity = capacity;
        this.intendedNs = new long[capacity];
        this.actualNs = new long[capacity];
        this.arrivalNs = new long[capacity];
        this.state = new byte[capacity];
        this.duplicates = new int[capacity];
        this.lateDuplicates = new int[capacity];
        this.afterSlot = new int[capacity];
        this.afterKind = new byte[capacity];
        this.afterRank = new long[capacity];
    }

    /** The slot of {@code sequence}, or -1 when it is not recorded. */
    public static int slot(long sequence, int every, int capacity) {
        if (sequence < 0 || sequence % every != 0) {
            return -1;
        }
        long s = sequence / every;
        return s < capacity ? (int) s : -1;
    }

    /** An arrival while the step was open, with the tracker's outcome ({@link SequenceTracker#NEW} and so on). */
    void arrived(long sequence, int outcome, long intended, long actual, long arrival) {
        int s = slot(sequence, every, capacity);
        if (s < 0) {
            return;
        }
        switch (outcome) {
            case SequenceTracker.NEW, SequenceTracker.REORDERED, SequenceTracker.LATE, SequenceTracker.LATE_UNKNOWN
                -> {
                state[s] = outcome == SequenceTracker.NEW ? RECEIVED
                    : outcome == SequenceTracker.REORDERED ? REORDERED : LATE;
                stamp(s, intended, actual, arrival);
            }
            case SequenceTracker.DUPLICATE -> duplicates[s]++;
            default -> lateDuplicates[s]++;
        }
    }

    /** An arrival after the step closed: {@code rank} is its count among the step's arrivals of that kind. */
    void arrivedAfterClose(long sequence, byte kind, long rank, long intended, long actual, long arrival) {
        int s = slot(sequence, every, capacity);
        if (s < 0) {
            return;
        }
        if (afterCount == capacity) {
            afterOverflow++;
            return;
        }
        afterSlot[afterCount] = s;
        afterKind[afterCount] = kind;
        afterRank[afterCount] = rank;
        afterCount++;
        if (kind == AFTER_LATE) {
            stamp(s, intended, actual, arrival);
        }
    }

    private void stamp(int s, long intended, long actual, long arrival) {
        intendedNs[s] = intended;
        actualNs[s] = actual;
        arrivalNs[s] = arrival;
    }

    /** The step closed: the tracker's own late counts (the rest of the result's are after-close arrivals). */
    void closed(long late, long lateDups) {
        this.trackerLate = late;
        this.trackerLateDuplicates = lateDups;
    }

    public int every() {
        return every;
    }

    public int capacity() {
        return capacity;
    }

    public byte state(int slot) {
        return state[slot];
    }

    public long intendedNs(int slot) {
        return intendedNs[slot];
    }

    public long actualNs(int slot) {
        return actualNs[slot];
    }

    public long arrivalNs(int slot) {
        return arrivalNs[slot];
    }

    public int duplicates(int slot) {
        return duplicates[slot];
    }

    public int lateDuplicates(int slot) {
        return lateDuplicates[slot];
    }

    public int afterCount() {
        return afterCount;
    }

    public int afterSlot(int i) {
        return afterSlot[i];
    }

    public byte afterKind(int i) {
        return afterKind[i];
    }

    public long afterRank(int i) {
        return afterRank[i];
    }

    /** After-close arrivals of recorded numbers not kept (more than {@link #capacity()}). */
    public long afterOverflow() {
        return afterOverflow;
    }

    /** First arrivals the tracker itself counted late (behind its window, while the step was open). */
    public long trackerLate() {
        return trackerLate;
    }

    public long trackerLateDuplicates() {
        return trackerLateDuplicates;
    }
}
