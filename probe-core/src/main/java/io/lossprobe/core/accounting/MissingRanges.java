package io.lossprobe.core.accounting;

/**
 * The sequence numbers a tracker finalised as missing, as ranges, so that an arrival behind the tracking window
 * (or after the step closed) can be told apart: a late first arrival (its number is in a range: it was counted
 * lost) or a late duplicate (it was received before). Bounded: past {@link #CAPACITY} ranges the oldest half is
 * forgotten, and arrivals below what is remembered are {@link #UNKNOWN}.
 *
 * <p>Not thread-safe: the tracker's receiving thread owns it.
 */
final class MissingRanges {
    /** 256 KiB per flow at most, grown only as loss runs come: a late arrival is classified over the last 16k. */
    static final int CAPACITY = 16_384;
    static final int FIRST = 0;
    static final int DUPLICATE = 1;
    static final int UNKNOWN = 2;

    private long[] starts = new long[0];
    private long[] ends = new long[0];
    private int size;
    /** Sequence numbers below this were forgotten. */
    private long horizon;

    /** Adds {@code [start, end)}, after every range added so far. */
    void add(long start, long end) {
        if (start >= end) {
            return;
        }
        if (size > 0 && ends[size - 1] == start) {
            ends[size - 1] = end;
            return;
        }
        makeRoom();
        starts[size] = start;
        ends[size] = end;
        size++;
    }

    private void makeRoom() {
        if (size == CAPACITY) {
            int keep = CAPACITY / 2;
            horizon = ends[size - keep - 1];
            System.arraycopy(starts, size - keep, starts, 0, keep);
            System.arraycopy(ends, size - keep, ends, 0, keep);
            size = keep;
        }
        if (size == starts.length) {
            int grown = Math.min(CAPACITY, Math.max(8, size * 2));
            starts = java.util.Arrays.copyOf(starts, grown);
            ends = java.util.Arrays.copyOf(ends, grown);
        }
    }

    /**
     * Classifies an arrival of finalised sequence {@code seq}; a first arrival is taken out of the missing set, so
     * a second copy of it is a duplicate.
     */
    int classify(long seq) {
        if (seq < horizon) {
            return UNKNOWN;
        }
        int lo = 0;
        int hi = size - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (ends[mid] <= seq) {
                lo = mid + 1;
            } else if (starts[mid] > seq) {
                hi = mid - 1;
            } else {
                remove(mid, seq);
                return FIRST;
            }
        }
        return DUPLICATE;
    }

    private void remove(int i, long seq) {
        long start = starts[i];
        long end = ends[i];
        if (start == seq && end == seq + 1) {
            System.arraycopy(starts, i + 1, starts, i, size - i - 1);
            System.arraycopy(ends, i + 1, ends, i, size - i - 1);
            size--;
        } else if (start == seq) {
            starts[i] = seq + 1;
        } else if (end == seq + 1) {
            ends[i] = seq;
        } else {
            int before = size;
            makeRoom();
            int shift = before - size; // ranges forgotten by makeRoom
            int at = i - shift;
            if (at < 0) {
                return; // the range itself was forgotten; seq is below the horizon now
            }
            System.arraycopy(starts, at + 1, starts, at + 2, size - at - 1);
            System.arraycopy(ends, at + 1, ends, at + 2, size - at - 1);
            ends[at] = seq;
            starts[at + 1] = seq + 1;
            ends[at + 1] = end;
            size++;
        }
    }

    /** Numbers below this were forgotten (0 while nothing was). */
    long forgottenBelow() {
        return horizon;
    }
}
