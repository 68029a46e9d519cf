package io.lossprobe.core.accounting;

import java.util.ArrayList;
import java.util.List;
import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * The reference for {@link SequenceTracker}: the same documented rules with unbounded memory (a TreeSet of every
 * sequence number received), no bitmap, no words, no sliding. Each rule is one method so that a new rule changes
 * one place.
 */
final class SequenceModel {
    private final int windowBits;
    /** Every sequence number accepted as received, never forgotten. */
    private final NavigableSet<Long> received = new TreeSet<>();
    private long highest = -1;
    private long duplicates;
    private long reordered;
    private long late;
    private long lateDuplicates;
    /** Numbers that arrived behind the window for the first time (late first arrivals). */
    private final NavigableSet<Long> arrivedLate = new TreeSet<>();
    /** (first, end) ranges the sender reported as failed: neither received nor lost. */
    private final List<long[]> skipped;

    SequenceModel(int windowBits) {
        this(windowBits, List.of());
    }

    SequenceModel(int windowBits, List<long[]> skipped) {
        this.windowBits = windowBits;
        this.skipped = skipped;
    }

    /** One arrival; returns the tracker's classification constant it must produce. */
    int arrive(long seq) {
        if (seq < windowBase()) {
            return arriveTooOld(seq);
        }
        if (!received.add(seq)) {
            duplicates++;
            return SequenceTracker.DUPLICATE;
        }
        if (seq < highest) {
            // RFC 4737: a first arrival lower than one already received.
            reordered++;
            return SequenceTracker.REORDERED;
        }
        highest = seq;
        return SequenceTracker.NEW;
    }

    /**
     * An arrival behind the window: its number is final, so it is not received. A number never received before
     * (nor late before) is a late first arrival, counted lost and late; anything else is a late duplicate.
     */
    private int arriveTooOld(long seq) {
        if (received.contains(seq) || !arrivedLate.add(seq)) {
            lateDuplicates++;
            return SequenceTracker.LATE_DUPLICATE;
        }
        late++;
        return SequenceTracker.LATE;
    }

    /**
     * Lowest sequence number still in the window: a multiple of 64, {@code windowBits} below the end of the
     * 64-bit word that holds the highest sequence number received. Everything below it is final.
     */
    long windowBase() {
        if (highest < 0) {
            return 0;
        }
        long endOfHighestWord = (highest / 64 + 1) * 64;
        return Math.max(0, endOfHighestWord - windowBits);
    }

    /**
     * End (exclusive) of the range that finish(sent) accounts for: [0, sent), or further when the window has
     * already finalised sequence numbers at or beyond {@code sent} (possible only if something arrived beyond it).
     */
    long accountedEnd(long sent) {
        return Math.max(windowBase(), sent);
    }

    /** Lengths of the maximal runs of missing sequence numbers in [0, accountedEnd(sent)), in sequence order. */
    List<Long> lossRuns(long sent) {
        List<Long> runs = new ArrayList<>();
        // Only a received number ends a run, so the runs are the gaps between consecutive received numbers.
        forEachGap(sent, (from, to) -> addRun(runs, from, to));
        return runs;
    }

    /** Each gap [from, to) between consecutive received numbers in [0, accountedEnd(sent)), in order. */
    private void forEachGap(long sent, java.util.function.BiConsumer<Long, Long> gap) {
        long end = accountedEnd(sent);
        long next = 0;
        for (long seq : received.headSet(end, false)) {
            gap.accept(next, seq);
            next = seq + 1;
        }
        gap.accept(next, end);
    }

    private void addRun(List<Long> runs, long fromInclusive, long toExclusive) {
        long lost = lostBetween(fromInclusive, toExclusive);
        if (lost > 0) {
            runs.add(lost);
        }
    }

    /**
     * How many of the sequence numbers in a gap between received ones count as lost: all but those the sender
     * reported as failed (so a run continues across a failed range, and a gap that is all failed is no run).
     */
    private long lostBetween(long fromInclusive, long toExclusive) {
        long lost = toExclusive - fromInclusive;
        for (long[] r : skipped) {
            long a = Math.max(fromInclusive, r[0]);
            long b = Math.min(toExclusive, r[1]);
            if (a < b) {
                lost -= b - a;
            }
        }
        return lost;
    }

    /**
     * The lost numbers after finish(sent) as maximal ranges: every number of [0, accountedEnd(sent)) neither received
     * nor failed at the sender (late first arrivals included), merged where they touch.
     */
    List<long[]> lostRanges(long sent) {
        List<long[]> out = new ArrayList<>();
        forEachGap(sent, (from, to) -> addLost(out, from, to));
        return out;
    }

    private void addLost(List<long[]> out, long from, long to) {
        long at = from;
        for (long[] r : skipped) {
            if (r[1] <= at || r[0] >= to) {
                continue;
            }
            addRange(out, at, Math.max(at, r[0]));
            at = Math.max(at, r[1]);
        }
        addRange(out, at, to);
    }

    private static void addRange(List<long[]> out, long from, long to) {
        if (from >= to) {
            return;
        }
        if (!out.isEmpty() && out.get(out.size() - 1)[1] == from) {
            out.get(out.size() - 1)[1] = to;
        } else {
            out.add(new long[] {from, to});
        }
    }

    /** The burst histogram the tracker must have built after finish(sent). */
    LossBurstHistogram bursts(long sent) {
        LossBurstHistogram h = new LossBurstHistogram();
        for (long run : lossRuns(sent)) {
            h.record(run);
        }
        return h;
    }

    long received() {
        return received.size();
    }

    long duplicates() {
        return duplicates;
    }

    long reordered() {
        return reordered;
    }

    long late() {
        return late;
    }

    long lateDuplicates() {
        return lateDuplicates;
    }

    /** The lowest number below {@code end} neither received, nor late, nor failed at the sender; -1 if none. */
    long firstLostBelow(long end) {
        for (long n = 0; n < end && n < 1_000_000; n++) {
            long seq = n;
            boolean failed = skipped.stream().anyMatch(r -> seq >= r[0] && seq < r[1]);
            if (!failed && !received.contains(seq) && !arrivedLate.contains(seq)) {
                return seq;
            }
        }
        return -1;
    }

    /** The highest number below {@code end} neither received, nor late, nor failed at the sender; -1 if none. */
    long lastLostBelow(long end) {
        for (long seq = end - 1; seq >= 0 && seq >= end - 1_000_000; seq--) {
            long n = seq;
            boolean failed = skipped.stream().anyMatch(r -> n >= r[0] && n < r[1]);
            if (!failed && !received.contains(n) && !arrivedLate.contains(n)) {
                return n;
            }
        }
        return -1;
    }

    /** Numbers in the sender's failed ranges below {@code end}. */
    long skippedBelow(long end) {
        long n = 0;
        for (long[] r : skipped) {
            n += Math.max(0, Math.min(end, r[1]) - r[0]);
        }
        return n;
    }

    long highest() {
        return highest;
    }
}
