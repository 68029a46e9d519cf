package io.lossprobe.core.accounting;

/**
 * Exact per-flow sequence accounting in bounded memory.
 *
 * <p>A bitmap covers a sliding window of {@code windowBits} sequence numbers ending at the highest one seen.
 * When the window slides, the sequence numbers that leave it are final: each one is received or lost, and runs
 * of lost ones become loss periods (RFC 3357). Memory is {@code windowBits / 8} bytes whatever the step's length.
 *
 * <ul>
 *   <li>{@code received}: distinct sequence numbers that arrived inside the window.</li>
 *   <li>{@code duplicates}: arrivals of a sequence number already received.</li>
 *   <li>{@code reordered}: first arrivals of a sequence number lower than one already received (RFC 4737).</li>
 *   <li>{@code late}: first arrivals of a sequence number already finalised as missing (more than the window
 *   behind the highest): counted lost, and late (RFC 7680).</li>
 *   <li>{@code lateDuplicates}: arrivals of a sequence number already finalised as received.</li>
 * </ul>
 *
 * <p>Sequence numbers the sender reports as failed ({@link FailedRanges}) are skipped when finalised: neither
 * received nor lost, and a loss run continues across them. Every number finalised as missing is remembered in
 * ranges (bounded, {@link MissingRanges}) so late arrivals can be classified; the remembered ranges also serve
 * late arrivals after the step closed ({@link #classifyLate}).
 *
 * <p>Not thread-safe: one receiving thread owns a tracker.
 */
public final class SequenceTracker {
    /** A first arrival in order (or after a gap). */
    public static final int NEW = 0;
    /** A first arrival of a sequence number lower than the highest seen. */
    public static final int REORDERED = 1;
    public static final int DUPLICATE = 2;
    /** A first arrival of a number already finalised as missing: lost, and late. */
    public static final int LATE = 3;
    /** An arrival of a number already finalised as received. */
    public static final int LATE_DUPLICATE = 4;
    /** An arrival of a finalised number the tracker no longer remembers (counted late). */
    public static final int LATE_UNKNOWN = 5;

    private final long[] words;
    private final int wordMask;
    private final int windowBits;

    /** Lowest sequence number still in the window; a multiple of 64. Everything below is final. */
    private long base;
    private long highest = -1;
    private long received;
    private long duplicates;
    private long reordered;
    private long late;
    private long lateDuplicates;
    private long lateUnknown;
    private final FailedRanges skipped;
    private int skipCursor;
    private final MissingRanges missing = new MissingRanges();
    /** The step's lost numbers, as finalised (late first arrivals stay in it): {@link #lostSet}. */
    private final LostSet.Builder lost = new LostSet.Builder();

    /** Length of the run of lost sequence numbers ending just below {@link #base}. */
    private long openRun;
    private long lostFinal;
    private final LossBurstHistogram bursts = new LossBurstHistogram();

    public SequenceTracker(int windowBits) {
        this(windowBits, null);
    }

    /**
     * @param windowBits sequence numbers tracked behind the highest; a power of two, at least 64
     * @param skipped    sequence numbers the sender reports as never sent (null: none); read as they are added
     */
    public SequenceTracker(int windowBits, FailedRanges skipped) {
        this.skipped = skipped;
        if (windowBits < 64 || Integer.bitCount(windowBits) != 1) {
            throw new IllegalArgumentException("window must be a power of two >= 64: " + windowBits);
        }
        this.windowBits = windowBits;
        this.words = new long[windowBits >>> 6];
        this.wordMask = words.length - 1;
    }

    /**
     * The most one flow's tracker holds in loss ranges, whatever the loss: its {@link MissingRanges} (late arrivals
     * and duplicates) and its {@link LostSet} (the exact lost numbers), each at its bound. A sender decides the gaps
     * it leaves, so this is what a controller can make a receiving host allocate per flow beyond the window.
     */
    public static long rangeBytesPerFlow() {
        return 2L * Long.BYTES * (MissingRanges.CAPACITY + LostSet.MAX_RANGES);
    }

    /**
     * Each flow's window for a step of {@code plan} at {@code level}: its rate over twice the drain, at least a
     * second ({@code max} levels as 2^20/s). The engine and a control server derive it alike, from the plan alone.
     */
    public static int[] windowsFor(io.lossprobe.core.plan.Plan plan, io.lossprobe.core.plan.Level level) {
        int[] bits = new int[plan.ports()];
        double trackSeconds = Math.max(1.0, 2.0 * plan.drainNs() / 1e9);
        for (int i = 0; i < bits.length; i++) {
            bits[i] = windowFor(level.isMax() ? 1 << 20 : plan.flowRate(level, i), trackSeconds);
        }
        return bits;
    }

    /** Window size that covers {@code seconds} of a flow at {@code ratePerSecond}, within [4096, 2^22]. */
    public static int windowFor(long ratePerSecond, double seconds) {
        long wanted = (long) Math.ceil(Math.max(1, ratePerSecond) * Math.max(seconds, 0.001));
        long clamped = Math.max(4096, Math.min(1L << 22, wanted));
        long bits = Long.highestOneBit(clamped);
        return (int) (bits < clamped ? bits << 1 : bits);
    }

    /**
     * Records one arrival; returns {@link #NEW}, {@link #REORDERED}, {@link #DUPLICATE}, or for a number behind the
     * window {@link #LATE}, {@link #LATE_DUPLICATE} or {@link #LATE_UNKNOWN}.
     */
    public int onSequence(long seq) {
        if (seq < base) {
            int late = classifyLate(seq);
            countLate(late);
            return late;
        }
        if (seq - base >= windowBits) {
            slideToInclude(seq);
        }
        int index = (int) (seq >>> 6) & wordMask;
        long bit = 1L << (seq & 63);
        long word = words[index];
        if ((word & bit) != 0) {
            duplicates++;
            return DUPLICATE;
        }
        words[index] = word | bit;
        received++;
        if (seq < highest) {
            reordered++;
            return REORDERED;
        }
        highest = seq;
        return NEW;
    }

    /**
     * Classifies an arrival of a number already finalised (behind the window, or after {@link #finish}): a late
     * first arrival is taken out of the missing numbers, so a second copy is a late duplicate. Does not count it.
     */
    public int classifyLate(long seq) {
        return classify(missing, seq);
    }

    private static int classify(MissingRanges missing, long seq) {
        return switch (missing.classify(seq)) {
            case MissingRanges.FIRST -> LATE;
            case MissingRanges.DUPLICATE -> LATE_DUPLICATE;
            default -> LATE_UNKNOWN;
        };
    }

    /**
     * After {@link #finish}: what classifies the step's late arrivals from now on, without the window's bitmap
     * (a closed step keeps only its missing numbers, bounded, not {@code windowBits / 8} bytes).
     */
    public LateClassifier lateClassifier() {
        return seq -> classify(missing, seq);
    }

    /** Tells a closed step's late first arrivals from its late duplicates: {@link #classifyLate}. */
    @FunctionalInterface
    public interface LateClassifier {
        int classify(long seq);
    }

    private void countLate(int outcome) {
        if (outcome == LATE) {
            late++;
        } else if (outcome == LATE_DUPLICATE) {
            lateDuplicates++;
        } else {
            lateUnknown++;
        }
    }

    private void slideToInclude(long seq) {
        long newBase = (((seq >>> 6) + 1) << 6) - windowBits;
        long oldEnd = base + windowBits;
        while (base < newBase && base < oldEnd) {
            int index = (int) (base >>> 6) & wordMask;
            finalizeBits(words[index], 64);
            words[index] = 0;
            base += 64;
        }
        if (base < newBase) {
            jumpMissing(newBase);
        }
    }

    /** Whole words beyond the window were never received: one run up to {@code newBase}, not walked bit by bit. */
    private void jumpMissing(long newBase) {
        long skippedHere = skipped == null ? 0 : skipped.countIn(base, newBase);
        openRun += newBase - base - skippedHere;
        missing.add(base, newBase);
        addLostSkipping(base, newBase);
        base = newBase;
    }

    /**
     * Closes the accounting: every sequence number below {@code wireEnd} (the sender's sent plus failed) is now
     * received, lost, or skipped as failed.
     */
    public void finish(long wireEnd) {
        long end = base + windowBits;
        while (base < wireEnd && base < end) {
            int index = (int) (base >>> 6) & wordMask;
            int bits = (int) Math.min(64, wireEnd - base);
            finalizeBits(words[index], bits);
            words[index] = 0;
            base += 64;
        }
        if (base < wireEnd) {
            jumpMissing(wireEnd);
        }
        closeRun();
    }

    /**
     * Walks {@code bits} low bits of the window word at {@link #base} in sequence order, extending or closing loss
     * runs and remembering the missing numbers; numbers the sender reported as failed are skipped.
     */
    private void finalizeBits(long word, int bits) {
        long mask = bits == 64 ? -1L : (1L << bits) - 1;
        long present = word & mask;
        if (present == mask) {
            closeRun();
            return;
        }
        long skip = skippedMask(base) & mask & ~present;
        if (skip != 0) {
            finalizeSkipping(present, skip, bits);
            return;
        }
        if (present == 0) {
            openRun += bits;
            missing.add(base, base + bits);
            lost.add(base, base + bits);
            return;
        }
        int pos = 0;
        while (pos < bits) {
            long rest = present >>> pos;
            if ((rest & 1) == 0) {
                int zeros = rest == 0 ? bits - pos : Math.min(bits - pos, Long.numberOfTrailingZeros(rest));
                openRun += zeros;
                missing.add(base + pos, base + pos + zeros);
                lost.add(base + pos, base + pos + zeros);
                pos += zeros;
            } else {
                closeRun();
                int ones = Long.numberOfTrailingZeros(~rest);
                pos += ones;
            }
        }
    }

    /** The rare word with failed numbers in it, bit by bit: a skipped number neither extends nor closes a run. */
    private void finalizeSkipping(long present, long skip, int bits) {
        for (int pos = 0; pos < bits; pos++) {
            long bit = 1L << pos;
            if ((skip & bit) != 0) {
                continue;
            }
            if ((present & bit) != 0) {
                closeRun();
            } else {
                openRun++;
                missing.add(base + pos, base + pos + 1);
                lost.add(base + pos, base + pos + 1);
            }
        }
    }

    /** Adds {@code [from, to)} to the lost set less the sender's failed ranges in it. */
    private void addLostSkipping(long from, long to) {
        long at = from;
        if (skipped != null) {
            int n = skipped.size();
            for (int i = 0; i < n && at < to; i++) {
                long first = skipped.first(i);
                long end = skipped.end(i);
                if (end <= at || first >= to) {
                    continue;
                }
                lost.add(at, Math.max(at, first));
                at = Math.max(at, end);
            }
        }
        lost.add(at, to);
    }

    /** Bits of the 64 numbers from {@code wordBase} that lie in a failed range. */
    private long skippedMask(long wordBase) {
        if (skipped == null) {
            return 0;
        }
        int n = skipped.size();
        while (skipCursor < n && skipped.end(skipCursor) <= wordBase) {
            skipCursor++;
        }
        long mask = 0;
        long wordEnd = wordBase + 64;
        for (int i = skipCursor; i < n && skipped.first(i) < wordEnd; i++) {
            int lo = (int) (Math.max(skipped.first(i), wordBase) - wordBase);
            int hi = (int) (Math.min(skipped.end(i), wordEnd) - wordBase);
            long upTo = hi == 64 ? -1L : (1L << hi) - 1;
            mask |= upTo & ~((1L << lo) - 1);
        }
        return mask;
    }

    private void closeRun() {
        if (openRun > 0) {
            bursts.record(openRun);
            lostFinal += openRun;
            openRun = 0;
        }
    }

    public long received() {
        return received;
    }

    public long duplicates() {
        return duplicates;
    }

    public long reordered() {
        return reordered;
    }

    /** First arrivals of numbers already finalised as missing (counted lost too). */
    public long late() {
        return late + lateUnknown;
    }

    /** Late arrivals below this are {@link #LATE_UNKNOWN}: the missing numbers there were forgotten. */
    public long forgottenBelow() {
        return missing.forgottenBelow();
    }

    /** Arrivals of numbers already finalised as received. */
    public long lateDuplicates() {
        return lateDuplicates;
    }

    public long highest() {
        return highest;
    }

    /** Sequence numbers counted missing in loss runs so far (after {@link #finish}, all of [0, wireEnd)). */
    public long lostInRuns() {
        return lostFinal;
    }

    /**
     * The step's lost numbers as ranges (after {@link #finish}: every number of {@code [0, wireEnd)} neither
     * received nor failed), {@link LostSet#UNKNOWN} past {@link LostSet#MAX_RANGES} ranges. Its count is
     * {@link #lostInRuns}.
     */
    public LostSet lostSet() {
        return lost.build();
    }

    public long lossEvents() {
        return bursts.events();
    }

    public LossBurstHistogram bursts() {
        return bursts;
    }

    public int windowBits() {
        return windowBits;
    }

    /** Bytes of state this tracker holds, whatever the number of messages seen. */
    public long footprintBytes() {
        return 8L * words.length;
    }
}
