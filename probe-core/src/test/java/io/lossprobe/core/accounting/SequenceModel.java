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
    private long tooOld;

    SequenceModel(int windowBits) {
        this.windowBits = windowBits;
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
     * An arrival behind the window: its number is final, so it is neither received nor a duplicate. The model
     * still knows whether it was received before, which is what telling late first arrivals from late
     * duplicates needs.
     */
    private int arriveTooOld(long seq) {
        tooOld++;
        return SequenceTracker.TOO_OLD;
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
        long end = accountedEnd(sent);
        List<Long> runs = new ArrayList<>();
        long next = 0;
        // Only a received number ends a run, so the runs are the gaps between consecutive received numbers.
        for (long seq : received.headSet(end, false)) {
            addRun(runs, next, seq);
            next = seq + 1;
        }
        addRun(runs, next, end);
        return runs;
    }

    private void addRun(List<Long> runs, long fromInclusive, long toExclusive) {
        long lost = lostBetween(fromInclusive, toExclusive);
        if (lost > 0) {
            runs.add(lost);
        }
    }

    /** How many of the sequence numbers in a gap between received ones count as lost. */
    private long lostBetween(long fromInclusive, long toExclusive) {
        return toExclusive - fromInclusive;
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

    long tooOld() {
        return tooOld;
    }

    long highest() {
        return highest;
    }
}
