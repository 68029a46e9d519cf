package io.lossprobe.udp;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Kernel receive stamps onto {@link System#nanoTime()}'s clock, right across steps of the realtime clock.
 *
 * <p>The kernel stamps a datagram (SO_TIMESTAMPNS) on CLOCK_REALTIME as it arrives; delays are measured on
 * CLOCK_MONOTONIC. The two differ by an offset that stays put until someone steps the realtime clock (NTP, chrony,
 * a VM's clock sync, an administrator: frequency corrections move both clocks alike). Every read samples that offset
 * ({@link NativeUdp#META_SAMPLE_BEFORE}, {@link NativeUdp#META_SAMPLE_AFTER}), each sample within half its window of
 * the truth. Two samples that disagree by more than that bracket a step: it came after the last sample that agreed
 * with the old offset (a preempted, wide one aside) and by the first that did not. Each offset holds for an epoch, and
 * a datagram was
 * stamped with the offset of the epoch it arrived in, which is the epoch its stamp falls in when converted with that
 * epoch's offset (and it arrived before it was read). Where one epoch fits, the conversion is exact to the samples'
 * windows (tens of nanoseconds). Where two fit (a datagram that may have arrived on either side of a step: one that
 * arrived inside a step's bracket or was queued across it, and a bracket longer than the step), the later of the two
 * times is taken, so the delay is never short and at most the step's size long; such stamps are counted
 * ({@link #doubtful}). A stamp no remembered epoch explains (a datagram queued across more than {@value #EPOCHS}
 * steps, or a step undone before the next sample) is given the last sample's time, which no datagram read so far can
 * have arrived after, and is counted too.
 *
 * <p>Fed and used by one reading thread; its counts are read by others. Allocates nothing; a stamp costs a
 * subtraction and two comparisons unless it could predate a step.
 */
final class RealtimeToMonotonic {
    /** The offsets remembered, newest last: enough for a datagram queued across this many steps less one. */
    static final int EPOCHS = 8;
    /** Added to a sample's half window: the clocks' own rounding, a nanosecond or two. */
    private static final long ROUNDING_NS = 2;
    /**
     * A sample this uncertain (a thread preempted while it sampled) agrees with almost any offset: it does not move
     * a later step's bracket, which starts at the last sample that would have seen the step.
     */
    private static final long TIGHT_SLACK_NS = 1_000;

    // Epoch k of count (0 the oldest remembered) sits at (first + k) % EPOCHS.
    private final long[] offsetNs = new long[EPOCHS];
    /** How far the epoch's offset may be from the truth: half its best sample's window, and the rounding. */
    private final long[] slackNs = new long[EPOCHS];
    /** The step that began the epoch came after this monotonic time (the oldest's: no bound) ... */
    private final long[] stepAfterNs = new long[EPOCHS];
    /** ... and by this one. */
    private final long[] stepByNs = new long[EPOCHS];
    private int first;
    private int count;
    private long lastSampleAtNs = Long.MIN_VALUE;
    /** The last sample that agreed with the newest offset within {@link #TIGHT_SLACK_NS} (or its epoch's own). */
    private long agreedAtNs;
    /** No datagram read so far arrived after this: the last sample's time, and its slack. */
    private long readLimitNs = Long.MIN_VALUE;
    private long newestOffsetNs;
    /** A stamp the newest offset converts to after this (and by the read limit) fits the newest epoch alone. */
    private long onlyNewestAfterNs = Long.MAX_VALUE;

    /**
     * The steps since the last {@link #takeReport} and the largest of them, in one word so that a report takes both
     * at once: the count above {@link #COUNT_SHIFT}, then the largest's sign, then its size in ns.
     */
    private final AtomicLong stepsPending = new AtomicLong();
    private static final int COUNT_SHIFT = 44;
    private static final long SIGN_BIT = 1L << (COUNT_SHIFT - 1);
    private static final long SIZE_MASK = SIGN_BIT - 1;
    private final AtomicLong doubtful = new AtomicLong();
    /** Of the doubtful stamps, those no remembered epoch explains. */
    private final AtomicLong unexplained = new AtomicLong();
    /** The most a doubtful stamp (not an unexplained one) may be late by, over this converter's life. */
    private final AtomicLong doubtBoundNs = new AtomicLong();
    /** The doubtful and unexplained stamps at the last {@link #takeReport} (the reporting thread's). */
    private long doubtfulReported;
    private long unexplainedReported;

    /** Takes the two samples a read left in {@code meta} ({@link NativeUdp}'s layout), before its stamps are
     * converted. */
    void readTaken(ByteBuffer meta) {
        sample(meta, NativeUdp.META_SAMPLE_BEFORE);
        sample(meta, NativeUdp.META_SAMPLE_AFTER);
    }

    private void sample(ByteBuffer meta, int at) {
        sample(meta.getLong(at + NativeUdp.SAMPLE_OFFSET_NS), meta.getLong(at + NativeUdp.SAMPLE_WINDOW_NS),
            meta.getLong(at + NativeUdp.SAMPLE_AT_NS));
    }

    /**
     * One sample: CLOCK_REALTIME minus CLOCK_MONOTONIC was {@code offsetNs}, within half of {@code windowNs}, at
     * monotonic time {@code atNs}. A sample without a window ({@code windowNs < 0}) or not newer than the last is none.
     */
    void sample(long offsetNs, long windowNs, long atNs) {
        if (windowNs < 0 || atNs <= lastSampleAtNs) {
            return;
        }
        long slack = windowNs / 2 + 1 + ROUNDING_NS;
        if (count == 0) {
            startEpoch(offsetNs, slack, Long.MIN_VALUE, Long.MIN_VALUE);
            agreedAtNs = atNs;
        } else {
            int n = index(count - 1);
            long moved = offsetNs - this.offsetNs[n];
            if (Math.abs(moved) <= slack + slackNs[n]) {
                if (slack <= Math.max(TIGHT_SLACK_NS, slackNs[n])) {
                    agreedAtNs = atNs;
                }
                if (slack < slackNs[n]) { // the same offset, known better
                    this.offsetNs[n] = offsetNs;
                    slackNs[n] = slack;
                }
            } else {
                startEpoch(offsetNs, slack, agreedAtNs, atNs);
                agreedAtNs = atNs;
                stepsPending.accumulateAndGet(moved, RealtimeToMonotonic::withStep);
            }
        }
        lastSampleAtNs = atNs;
        int n = index(count - 1);
        newestOffsetNs = this.offsetNs[n];
        readLimitNs = atNs + slackNs[n];
        onlyNewestAfterNs = onlyNewestAfter();
    }

    private void startEpoch(long offsetNs, long slack, long stepAfterNs, long stepByNs) {
        if (count == EPOCHS) {
            first = index(1);
            count--;
        }
        int e = index(count++);
        this.offsetNs[e] = offsetNs;
        slackNs[e] = slack;
        this.stepAfterNs[e] = stepAfterNs;
        this.stepByNs[e] = stepByNs;
    }

    /**
     * The bound past which a stamp, converted with the newest offset, fits the newest epoch and no older one: older
     * epoch e fits only a stamp that its own offset converts to by the step that ended it.
     */
    private long onlyNewestAfter() {
        int n = index(count - 1);
        long bound = count == 1 ? Long.MIN_VALUE : stepAfterNs[n] - slackNs[n];
        for (int k = 0; k < count - 1; k++) {
            int e = index(k);
            bound = Math.max(bound, endsByNs(k) + offsetNs[e] - offsetNs[n]);
        }
        return bound;
    }

    /** No datagram stamped in epoch k (not the newest) arrived after this. */
    private long endsByNs(int k) {
        return stepByNs[index(k + 1)] + slackNs[index(k)];
    }

    /** The monotonic time of a kernel stamp taken on CLOCK_REALTIME, read since the last {@link #readTaken}. */
    long toMonotonic(long realtimeNs) {
        long ns = realtimeNs - newestOffsetNs;
        if (ns > onlyNewestAfterNs && ns <= readLimitNs) {
            return ns;
        }
        return acrossSteps(realtimeNs);
    }

    /** The rare case: a stamp that could predate a step, or one no epoch explains. */
    private long acrossSteps(long realtimeNs) {
        long latest = Long.MIN_VALUE;
        long earliest = Long.MAX_VALUE;
        int fits = 0;
        for (int k = 0; k < count; k++) {
            int e = index(k);
            long ns = realtimeNs - offsetNs[e];
            boolean afterStart = k == 0 || ns > stepAfterNs[e] - slackNs[e];
            boolean byEnd = ns <= (k == count - 1 ? readLimitNs : endsByNs(k));
            if (afterStart && byEnd) {
                fits++;
                latest = Math.max(latest, ns);
                earliest = Math.min(earliest, ns);
            }
        }
        if (fits == 1) {
            return latest;
        }
        doubtful.lazySet(doubtful.get() + 1);
        if (fits > 1) {
            if (latest - earliest > doubtBoundNs.get()) {
                doubtBoundNs.lazySet(latest - earliest);
            }
            return latest;
        }
        unexplained.lazySet(unexplained.get() + 1);
        return count == 0 ? System.nanoTime() : lastSampleAtNs; // no sample yet: now, as a user-space stamp would
    }

    private int index(int k) {
        return (first + k) % EPOCHS;
    }

    /** {@link #stepsPending} with one more step of {@code movedNs}. */
    private static long withStep(long pending, long movedNs) {
        long count = Math.min((pending >>> COUNT_SHIFT) + 1, (1L << (63 - COUNT_SHIFT)) - 1);
        long size = Math.min(Math.abs(movedNs), SIZE_MASK);
        long largest = (pending & SIZE_MASK) >= size ? pending & (SIGN_BIT | SIZE_MASK)
            : size | (movedNs < 0 ? SIGN_BIT : 0);
        return count << COUNT_SHIFT | largest;
    }

    /** Stamps that could have been taken on either side of a step (or fit no epoch), over this converter's life. */
    long doubtful() {
        return doubtful.get();
    }

    /** What was seen since the last call; called by one thread (the one that reports the steps). */
    Report takeReport() {
        long pending = stepsPending.getAndSet(0);
        long size = pending & SIZE_MASK;
        long d = doubtful.get();
        long u = unexplained.get();
        Report r = new Report(pending >>> COUNT_SHIFT, (pending & SIGN_BIT) != 0 ? -size : size, d - doubtfulReported,
            u - unexplainedReported, doubtBoundNs.get());
        doubtfulReported = d;
        unexplainedReported = u;
        return r;
    }

    /**
     * Realtime steps seen over a stretch, by one reader or several.
     *
     * @param steps         steps seen (several readers: the most any one saw, as each sees every step it samples)
     * @param largestStepNs the largest step, signed (+: the realtime clock jumped ahead); 0 without one
     * @param doubtful      stamps that could have been taken on either side of a step, given the later time, and
     *                      the unexplained ones
     * @param unexplained   of those, the stamps no remembered step explains, given the last sample's time
     * @param doubtBoundNs  the most any doubtful stamp (but an unexplained one) was late by, over the reader's life
     */
    record Report(long steps, long largestStepNs, long doubtful, long unexplained, long doubtBoundNs) {
        static final Report NONE = new Report(0, 0, 0, 0, 0);

        /** Two readers' reports over the same stretch as one. */
        Report and(Report other) {
            return new Report(Math.max(steps, other.steps),
                Math.abs(other.largestStepNs) > Math.abs(largestStepNs) ? other.largestStepNs : largestStepNs,
                doubtful + other.doubtful, unexplained + other.unexplained, Math.max(doubtBoundNs, other.doubtBoundNs));
        }
    }
}
