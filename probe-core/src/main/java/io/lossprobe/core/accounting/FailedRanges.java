package io.lossprobe.core.accounting;

/**
 * The wire sequence ranges of one flow and step that the sender accepted and then learned never left (an error
 * that surfaced after the write, see {@code SendFailureListener}). They are neither received nor lost: the
 * receiver's {@link SequenceTracker} skips them, so a step's wire sequences are exactly {@code [0, sent + failed)}
 * and the tracker finalises only what was sent.
 *
 * <p>One writer (the thread that learns of the failures) appends ranges in increasing sequence order; any thread
 * may read. Readers see a prefix: {@link #size()} first, then {@link #first}/{@link #end} below it. A range that
 * arrives out of order or past {@link #MAX_RANGES} is not recorded (it is counted in {@link #unrecorded()}): its
 * messages then stay "sent", and if they never arrive they are lost, consistently on both sides of the ledger.
 */
public final class FailedRanges {
    /** Most ranges one flow records in one step; 1 MiB of longs. */
    public static final int MAX_RANGES = 1 << 16;
    private static final long[] NONE = new long[0];

    private volatile long[] pairs = NONE;
    private volatile int size;
    private volatile long total;
    private long unrecorded;

    /** A fresh, empty ledger for each of {@code flows} flows: one step's. */
    public static FailedRanges[] perFlow(int flows) {
        FailedRanges[] out = new FailedRanges[flows];
        for (int i = 0; i < flows; i++) {
            out[i] = new FailedRanges();
        }
        return out;
    }

    /** Records {@code count} sequences from {@code first} as failed. Single writer. */
    public void add(long first, long count) {
        if (count <= 0 || first < 0) {
            return;
        }
        int n = size;
        long[] p = pairs;
        if ((n > 0 && first < p[2 * n - 1]) || n == MAX_RANGES) {
            unrecorded += count;
            return;
        }
        if (2 * n == p.length) {
            p = java.util.Arrays.copyOf(p, Math.max(16, p.length * 2));
        }
        p[2 * n] = first;
        p[2 * n + 1] = first + count;
        pairs = p;          // publish the array before the size that makes its new range visible
        total = total + count;
        size = n + 1;
    }

    /** Ranges recorded so far. */
    public int size() {
        return size;
    }

    /** First sequence of range {@code i} ({@code i < size()}). */
    public long first(int i) {
        return pairs[2 * i];
    }

    /** One past the last sequence of range {@code i}. */
    public long end(int i) {
        return pairs[2 * i + 1];
    }

    /** Sequences in recorded ranges. */
    public long total() {
        return total;
    }

    /** Failed sequences that could not be recorded (out of order, or past the cap); zero in a healthy run. */
    public long unrecorded() {
        return unrecorded;
    }

    /** Ranges {@code from} .. {@code size()-1} as (first, end) pairs, for shipping to another host. */
    public long[] pairsFrom(int from) {
        int n = size;
        long[] p = pairs;
        return from >= n ? NONE : java.util.Arrays.copyOfRange(p, 2 * from, 2 * n);
    }

    /** Appends (first, end) pairs as received from another host; bad pairs are not recorded. */
    public void addPairs(long[] firstEndPairs) {
        for (int i = 0; i + 1 < firstEndPairs.length; i += 2) {
            add(firstEndPairs[i], firstEndPairs[i + 1] - firstEndPairs[i]);
        }
    }

    /** Failed sequences in {@code [from, to)}. */
    public long countIn(long from, long to) {
        long sum = 0;
        int n = size;
        for (int i = 0; i < n; i++) {
            long a = Math.max(from, first(i));
            long b = Math.min(to, end(i));
            if (a < b) {
                sum += b - a;
            }
        }
        return sum;
    }
}
