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
 *   <li>{@code tooOld}: arrivals more than the window behind the highest sequence number. Whether they were
 *   duplicates can no longer be known, so they are not received; they count as late (and so as lost).</li>
 * </ul>
 *
 * <p>Not thread-safe: one receiving thread owns a tracker.
 */
public final class SequenceTracker {
    /** A first arrival in order (or after a gap). */
    public static final int NEW = 0;
    /** A first arrival of a sequence number lower than the highest seen. */
    public static final int REORDERED = 1;
    public static final int DUPLICATE = 2;
    public static final int TOO_OLD = 3;

    private final long[] words;
    private final int wordMask;
    private final int windowBits;

    /** Lowest sequence number still in the window; a multiple of 64. Everything below is final. */
    private long base;
    private long highest = -1;
    private long received;
    private long duplicates;
    private long reordered;
    private long tooOld;

    /** Length of the run of lost sequence numbers ending just below {@link #base}. */
    private long openRun;
    private long lostFinal;
    private final LossBurstHistogram bursts = new LossBurstHistogram();

    /** @param windowBits sequence numbers tracked behind the highest; a power of two, at least 64 */
    public SequenceTracker(int windowBits) {
        if (windowBits < 64 || Integer.bitCount(windowBits) != 1) {
            throw new IllegalArgumentException("window must be a power of two >= 64: " + windowBits);
        }
        this.windowBits = windowBits;
        this.words = new long[windowBits >>> 6];
        this.wordMask = words.length - 1;
    }

    /** Window size that covers {@code seconds} of a flow at {@code ratePerSecond}, within [4096, 2^22]. */
    public static int windowFor(long ratePerSecond, double seconds) {
        long wanted = (long) Math.ceil(Math.max(1, ratePerSecond) * Math.max(seconds, 0.001));
        long clamped = Math.max(4096, Math.min(1L << 22, wanted));
        long bits = Long.highestOneBit(clamped);
        return (int) (bits < clamped ? bits << 1 : bits);
    }

    /** Records one arrival; returns {@link #NEW}, {@link #REORDERED}, {@link #DUPLICATE} or {@link #TOO_OLD}. */
    public int onSequence(long seq) {
        if (seq < base) {
            tooOld++;
            return TOO_OLD;
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
            // Whole words beyond the old window were never received: one run, no need to walk it.
            openRun += newBase - base;
            base = newBase;
        }
    }

    /** Closes the accounting: every sequence number below {@code sent} is now received or lost. */
    public void finish(long sent) {
        long end = base + windowBits;
        while (base < sent && base < end) {
            int index = (int) (base >>> 6) & wordMask;
            int bits = (int) Math.min(64, sent - base);
            finalizeBits(words[index], bits);
            words[index] = 0;
            base += 64;
        }
        if (base < sent) {
            openRun += sent - base;
            base = sent;
        }
        closeRun();
    }

    /** Walks {@code bits} low bits of a window word in sequence order, extending or closing loss runs. */
    private void finalizeBits(long word, int bits) {
        long mask = bits == 64 ? -1L : (1L << bits) - 1;
        long present = word & mask;
        if (present == mask) {
            closeRun();
            return;
        }
        if (present == 0) {
            openRun += bits;
            return;
        }
        int pos = 0;
        while (pos < bits) {
            long rest = present >>> pos;
            if ((rest & 1) == 0) {
                int zeros = rest == 0 ? bits - pos : Math.min(bits - pos, Long.numberOfTrailingZeros(rest));
                openRun += zeros;
                pos += zeros;
            } else {
                closeRun();
                int ones = Long.numberOfTrailingZeros(~rest);
                pos += ones;
            }
        }
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

    public long tooOld() {
        return tooOld;
    }

    public long highest() {
        return highest;
    }

    /** Sequence numbers counted missing in loss runs so far (after {@link #finish}, all of [0, sent)). */
    public long lostInRuns() {
        return lostFinal;
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
