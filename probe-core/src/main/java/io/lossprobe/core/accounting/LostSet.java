package io.lossprobe.core.accounting;

import java.util.Arrays;
import java.util.List;

/**
 * The sequence numbers of one flow's step that its receiver counted lost, as sorted, disjoint, non-adjacent ranges
 * {@code [first, end)}: every number of the step's wire sequences {@code [0, sent + sendFailed)} that is neither
 * among the sender's failed ranges nor received before the step closed. A late first arrival (behind the tracking
 * window, or after the close) stays in it, as it stays in {@code lost}; so {@link #count()} is the flow's
 * {@code lostInRuns}, and equals its {@code lost} in a healthy step.
 *
 * <p>Bounded: a tracker keeps at most {@link #MAX_RANGES} ranges per flow and step. Past that the set is
 * {@link #UNKNOWN}: what it held is dropped, never guessed at, and whatever is composed from it (the union over a
 * multicast step's receivers) says it is unknown.
 *
 * <p>Immutable; {@link Builder} (the tracker's receiving thread) makes one.
 */
public final class LostSet {
    /** Most ranges one flow keeps per step: 64 KiB of longs, grown only as loss runs come. */
    public static final int MAX_RANGES = 4096;
    /** The set of a flow that had more than {@link #MAX_RANGES} loss ranges (or kept none). */
    public static final LostSet UNKNOWN = new LostSet(null, -1);
    /** Nothing lost. */
    public static final LostSet EMPTY = new LostSet(new long[0], 0);

    /** (first, end) pairs, or null when unknown. */
    private final long[] pairs;
    private final long count;

    private LostSet(long[] pairs, long count) {
        this.pairs = pairs;
        this.count = count;
    }

    /**
     * The set of {@code firstEndPairs} ({@code first0, end0, first1, end1, ...}), checked: each range non-empty and
     * non-negative, each after the one before with a gap between (as a tracker merges adjacent ones), at most
     * {@link #MAX_RANGES}, and all below {@code wireEnd}.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static LostSet of(long[] firstEndPairs, long wireEnd) {
        if (firstEndPairs.length % 2 != 0) {
            throw new IllegalArgumentException("lost ranges must come in (first, end) pairs");
        }
        if (firstEndPairs.length / 2 > MAX_RANGES) {
            throw new IllegalArgumentException("more than " + MAX_RANGES + " lost ranges");
        }
        long count = 0;
        long previousEnd = -1;
        for (int i = 0; i < firstEndPairs.length; i += 2) {
            long first = firstEndPairs[i];
            long end = firstEndPairs[i + 1];
            if (first < 0 || end <= first) {
                throw new IllegalArgumentException("a lost range is negative, empty or inverted");
            }
            if (first <= previousEnd) {
                throw new IllegalArgumentException("lost ranges out of order, overlapping or adjacent");
            }
            if (end > wireEnd) {
                throw new IllegalArgumentException("a lost range ends past the flow's wire end " + wireEnd);
            }
            count += end - first;
            previousEnd = end;
        }
        return new LostSet(firstEndPairs.clone(), count);
    }

    /** Whether the ranges are known (not past the bound). */
    public boolean known() {
        return pairs != null;
    }

    /** Numbers in the set; -1 when unknown. */
    public long count() {
        return count;
    }

    /** Ranges in the set; -1 when unknown. */
    public int ranges() {
        return pairs == null ? -1 : pairs.length / 2;
    }

    /** The ranges as (first, end) pairs, a copy; null when unknown. */
    public long[] pairs() {
        return pairs == null ? null : pairs.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LostSet other && Arrays.equals(pairs, other.pairs);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(pairs);
    }

    @Override
    public String toString() {
        if (pairs == null) {
            return "LostSet[unknown]";
        }
        StringBuilder b = new StringBuilder("LostSet[");
        for (int i = 0; i < pairs.length; i += 2) {
            b.append(i == 0 ? "" : ", ").append('[').append(pairs[i]).append(", ").append(pairs[i + 1]).append(')');
        }
        return b.append(']').toString();
    }

    /**
     * How the lost sets of one flow at several receivers overlap: {@code anywhere}, the numbers lost by at least
     * one (the union's size), and {@code atAll}, those lost by every one (the intersection's).
     */
    public record Overlap(long anywhere, long atAll) {
    }

    /**
     * The overlap of {@code sets}, all known and at least one: a sweep over every range's two ends, counting how
     * many sets cover each stretch between consecutive ends.
     */
    public static Overlap overlap(List<LostSet> sets) {
        if (sets.isEmpty()) {
            throw new IllegalArgumentException("an overlap needs one set or more");
        }
        int ends = 0;
        for (LostSet s : sets) {
            if (!s.known()) {
                throw new IllegalArgumentException("an unknown lost set has no overlap");
            }
            ends += s.pairs.length;
        }
        // Every range's start (+1) and end (-1), sorted by position: ends that share a position may come in any
        // order, as the stretch between them is empty and adds nothing.
        long[] positions = new long[ends];
        int[] deltas = new int[ends];
        Integer[] order = new Integer[ends];
        int n = 0;
        for (LostSet s : sets) {
            for (int i = 0; i < s.pairs.length; i++) {
                positions[n] = s.pairs[i];
                deltas[n] = i % 2 == 0 ? 1 : -1;
                order[n] = n;
                n++;
            }
        }
        Arrays.sort(order, (a, b) -> Long.compare(positions[a], positions[b]));
        long anywhere = 0;
        long atAll = 0;
        int covering = 0;
        long at = 0;
        for (Integer e : order) {
            long p = positions[e];
            if (covering > 0) {
                anywhere += p - at;
            }
            if (covering == sets.size()) {
                atAll += p - at;
            }
            covering += deltas[e];
            at = p;
        }
        return new Overlap(anywhere, atAll);
    }

    /**
     * Builds one flow's set as a tracker finalises its numbers, in increasing order: appends, merging a range
     * with the one before when they touch. Past {@link #MAX_RANGES} ranges it keeps nothing more (and frees what it
     * held): the set is then {@link #UNKNOWN}. Not thread-safe: the tracker's thread owns it.
     */
    static final class Builder {
        private long[] pairs = new long[0];
        private int size;
        private boolean overflowed;

        /** Adds {@code [start, end)}, after every range added so far. */
        void add(long start, long end) {
            if (start >= end || overflowed) {
                return;
            }
            if (size > 0 && pairs[2 * size - 1] == start) {
                pairs[2 * size - 1] = end;
                return;
            }
            if (size == MAX_RANGES) {
                overflowed = true;
                pairs = null;
                return;
            }
            if (2 * size == pairs.length) {
                pairs = Arrays.copyOf(pairs, Math.min(2 * MAX_RANGES, Math.max(16, pairs.length * 2)));
            }
            pairs[2 * size] = start;
            pairs[2 * size + 1] = end;
            size++;
        }

        /** The set as built so far. */
        LostSet build() {
            if (overflowed) {
                return UNKNOWN;
            }
            long count = 0;
            for (int i = 0; i < size; i++) {
                count += pairs[2 * i + 1] - pairs[2 * i];
            }
            return new LostSet(Arrays.copyOf(pairs, 2 * size), count);
        }
    }
}
