package io.lossprobe.core.accounting;

import io.lossprobe.core.result.SignedHistogram;

/**
 * One flow's receive counts per interval of a step's window ({@code run --interval}), each message counted in the
 * interval that holds its intended send time (the header's), so the intervals add up to the step exactly and a lost
 * message belongs to the interval that was meant to send it. Written only by the flow's receiving thread, from
 * {@link FlowReceiver#onMessage}: plain arrays, no lock, no I/O. Read once the step closed.
 */
public final class IntervalTally {
    private final long windowStartNs;
    private final long intervalNs;
    private final long[] received;
    private final long[] duplicates;
    private final long[] reordered;
    private final SignedHistogram[] delay;

    /**
     * @param windowStartNs when the window begins, on the sender's clock (the intended time of its first message)
     * @param intervalNs    each interval's length
     * @param intervals     how many: the last one takes every later intended time (a window that ran long)
     */
    public IntervalTally(long windowStartNs, long intervalNs, int intervals) {
        if (intervalNs <= 0 || intervals < 1) {
            throw new IllegalArgumentException("intervals need a length and a count");
        }
        this.windowStartNs = windowStartNs;
        this.intervalNs = intervalNs;
        this.received = new long[intervals];
        this.duplicates = new long[intervals];
        this.reordered = new long[intervals];
        this.delay = new SignedHistogram[intervals];
    }

    /** The interval holding intended time {@code intendedNs}: the first for anything earlier, the last for later. */
    public static int index(long intendedNs, long windowStartNs, long intervalNs, int intervals) {
        long offset = intendedNs - windowStartNs;
        if (offset < 0) {
            return 0;
        }
        long i = offset / intervalNs;
        return i >= intervals ? intervals - 1 : (int) i;
    }

    private int index(long intendedNs) {
        return index(intendedNs, windowStartNs, intervalNs, received.length);
    }

    /** A first arrival (in order or reordered) and its one-way delay. */
    void first(long intendedNs, boolean wasReordered, long delayNs) {
        int i = index(intendedNs);
        received[i]++;
        if (wasReordered) {
            reordered[i]++;
        }
        SignedHistogram h = delay[i];
        if (h == null) {
            h = new SignedHistogram();
            delay[i] = h;
        }
        h.record(delayNs);
    }

    void duplicate(long intendedNs) {
        duplicates[index(intendedNs)]++;
    }

    public int intervals() {
        return received.length;
    }

    public long received(int interval) {
        return received[interval];
    }

    public long duplicates(int interval) {
        return duplicates[interval];
    }

    public long reordered(int interval) {
        return reordered[interval];
    }

    /** The interval's delays, or null when none of its messages arrived. */
    public SignedHistogram delay(int interval) {
        return delay[interval];
    }

    /** Bytes one interval's delay histogram holds (what --interval costs per flow and interval). */
    public static long histogramBytes() {
        return io.lossprobe.core.result.Latency.newHistogram().getEstimatedFootprintInBytes();
    }
}
