package io.lossprobe.core.accounting;

import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.LossBurst;
import io.lossprobe.core.wire.MessageHeader;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;

/**
 * Receive-side accounting of one flow: validates each message's header, feeds the sequence tracker, and records
 * one-way delay, RFC 3550 jitter and RFC 3393 IPDV.
 *
 * <p>Transports call {@link #onMessage} from their receiving thread with the four header words they read.
 * {@link #beginStep} and {@link #closeStep} must run on that same thread (see
 * {@code ReceiverEndpoint.onReceiveThread}); {@link #progress()} and {@link #lateAfterClose} may be read
 * from any thread.
 */
public final class FlowReceiver {
    private static final long HIGHEST_DELAY_NS = Latency.HIGHEST_TRACKABLE_NS;

    private final int flowId;
    private final int runId;
    private final int dataKind;
    private final int messageLength;
    private final AtomicLongArray lateAfterClose;
    private final AtomicLongArray lateDuplicatesAfterClose;
    private final AtomicLong progress = new AtomicLong();

    private final Histogram delay = Latency.newHistogram();
    private final Histogram ipdv = Latency.newHistogram();
    private SequenceTracker tracker;
    /** The last closed step's tracker, kept to classify that step's late arrivals; its wire end. */
    private SequenceTracker closedTracker;
    private int closedStep = -1;
    private long closedWireEnd;
    private int step = -1;
    private boolean open;
    private long corrupt;
    private long warmup;
    private long minTransit = Long.MAX_VALUE;
    private long lastTransit;
    private boolean haveTransit;
    private double jitter;
    private long negativeDelays;
    private boolean offsetFree;
    private io.lossprobe.core.pacing.SendFilter replyFilter = io.lossprobe.core.pacing.SendFilter.NONE;
    private long warmupMinTransit = Long.MAX_VALUE;
    private long baseline;
    private boolean haveBaseline;

    /**
     * @param steps number of steps in the run, so late arrivals for any closed step can be counted
     */
    public FlowReceiver(int flowId, int runId, int messageLength, int steps) {
        this(flowId, runId, messageLength, steps, false);
    }

    /**
     * @param replies true for the requester's side of echo mode: the messages counted are replies
     *                ({@link MessageHeader#KIND_ECHO}) and their delay is the round trip on one clock
     */
    public FlowReceiver(int flowId, int runId, int messageLength, int steps, boolean replies) {
        this.dataKind = replies ? MessageHeader.KIND_ECHO : MessageHeader.KIND_DATA;
        this.flowId = flowId;
        this.runId = runId;
        this.messageLength = messageLength;
        this.lateAfterClose = new AtomicLongArray(Math.max(1, steps));
        this.lateDuplicatesAfterClose = new AtomicLongArray(Math.max(1, steps));
    }

    /**
     * Records delays relative to a baseline instead of as absolute one-way delays, for senders on another host
     * whose clock has an unknown offset. The baseline is the smallest transit seen in the step's warm-up (or the
     * first data message's when there was none); the reported distribution is then shifted to start at the
     * window's smallest transit: delay in excess of the flow's minimum.
     */
    public void offsetFree(boolean enabled) {
        this.offsetFree = enabled;
    }

    /**
     * Test seam for echo mode: a message the filter picks is counted as usual but reported as not to be answered,
     * so its reply is lost on the way back, exactly.
     */
    public void replyFilter(io.lossprobe.core.pacing.SendFilter filter) {
        this.replyFilter = filter == null ? io.lossprobe.core.pacing.SendFilter.NONE : filter;
    }

    public boolean isOffsetFree() {
        return offsetFree;
    }

    /** Starts counting step {@code step} with a fresh tracker of {@code windowBits}. */
    public void beginStep(int step, int windowBits) {
        beginStep(step, windowBits, null);
    }

    /**
     * Starts counting step {@code step} with a fresh tracker of {@code windowBits}, skipping the sequence numbers
     * the sender reports in {@code failed} as never sent (read as they are added; null: none).
     */
    public void beginStep(int step, int windowBits, FailedRanges failed) {
        this.step = step;
        this.tracker = new SequenceTracker(windowBits, failed);
        this.open = true;
        corrupt = 0;
        warmup = 0;
        delay.reset();
        ipdv.reset();
        minTransit = Long.MAX_VALUE;
        haveTransit = false;
        jitter = 0;
        negativeDelays = 0;
        warmupMinTransit = Long.MAX_VALUE;
        haveBaseline = false;
        progress.lazySet(0);
    }

    /**
     * Accounts one message.
     *
     * @param length    bytes the transport actually delivered for this message
     * @param arrivalNs receive time on this host's {@link System#nanoTime()} clock
     * @return true when this was the first arrival of a message of the open step: in echo mode the transport
     *         sends exactly these back (duplicates, late, warm-up and corrupt messages are not answered)
     */
    public boolean onMessage(long word0, long word1, long sequence, long sendTimeNs, int length, long arrivalNs) {
        if (!MessageHeader.isLossprobe(word0) || MessageHeader.runId(word1) != runId
            || MessageHeader.flowId(word0) != flowId || MessageHeader.length(word1) != messageLength
            || length != messageLength || sequence < 0) {
            corrupt++;
            return false;
        }
        int kind = MessageHeader.kind(word0);
        int msgStep = MessageHeader.step(word1);
        if (kind == MessageHeader.KIND_WARMUP) {
            warmup++;
            if (msgStep == step) {
                warmupMinTransit = Math.min(warmupMinTransit, arrivalNs - sendTimeNs);
            }
            return false;
        }
        if (kind != dataKind) {
            corrupt++;
            return false;
        }
        if (!open || msgStep != step) {
            onClosedStep(msgStep, sequence);
            return false;
        }
        int outcome = tracker.onSequence(sequence);
        if (outcome == SequenceTracker.NEW || outcome == SequenceTracker.REORDERED) {
            recordDelay(arrivalNs - sendTimeNs);
            progress.lazySet(tracker.received());
            return !replyFilter.drop(flowId, sequence);
        }
        return false;
    }

    /** A data message for a step that closed: late (a first arrival, counted lost there) or a late duplicate. */
    private void onClosedStep(int msgStep, long sequence) {
        boolean closed = msgStep < lateAfterClose.length() && (msgStep < step || (msgStep == step && !open));
        if (!closed) {
            corrupt++; // a step this receiver has not begun: not a message of this run's schedule
            return;
        }
        if (msgStep != closedStep || closedTracker == null) {
            lateAfterClose.incrementAndGet(msgStep); // older than the last closed step: assumed a first arrival
            return;
        }
        if (sequence >= closedWireEnd) {
            corrupt++; // the sender never put this number on the wire
            return;
        }
        if (closedTracker.classifyLate(sequence) == SequenceTracker.LATE_DUPLICATE) {
            lateDuplicatesAfterClose.incrementAndGet(msgStep);
        } else {
            lateAfterClose.incrementAndGet(msgStep);
        }
    }

    private void recordDelay(long rawTransit) {
        long transit = rawTransit;
        if (offsetFree) {
            if (!haveBaseline) {
                baseline = warmupMinTransit != Long.MAX_VALUE ? Math.min(warmupMinTransit, rawTransit) : rawTransit;
                haveBaseline = true;
            }
            transit = rawTransit - baseline;
        }
        if (transit < minTransit) {
            minTransit = transit;
        }
        if (transit < 0 && offsetFree) {
            delay.recordValue(0); // below the warm-up's minimum: the minimum moved, not a clock fault
        } else if (transit < 0) {
            negativeDelays++;
        } else {
            delay.recordValue(Math.min(transit, HIGHEST_DELAY_NS));
        }
        if (haveTransit) {
            long d = Math.abs(transit - lastTransit);
            ipdv.recordValue(Math.min(d, HIGHEST_DELAY_NS));
            jitter += (d - jitter) / 16.0; // RFC 3550 section 6.4.1
        }
        lastTransit = transit;
        haveTransit = true;
    }

    /**
     * Closes the step: every wire sequence number below {@code wireEnd} (the sender's sent plus failed) is now
     * received, lost or skipped as failed; arrivals for this step from now on count as late.
     */
    public Summary closeStep(long wireEnd) {
        open = false;
        tracker.finish(wireEnd);
        closedTracker = tracker;
        closedStep = step;
        closedWireEnd = wireEnd;
        return new Summary(step, tracker.received(), tracker.duplicates(), tracker.reordered(), tracker.late(),
            tracker.lateDuplicates(), corrupt, warmup, tracker.lossEvents(), tracker.lostInRuns(),
            tracker.bursts().toResult(), delay.copy(), ipdv.copy(), jitter, negativeDelays,
            minTransit == Long.MAX_VALUE ? 0 : minTransit);
    }

    /** Distinct messages received so far in the open step; safe from any thread. */
    public long progress() {
        return progress.get();
    }

    /** First arrivals for {@code step} after it closed (counted lost there); safe from any thread. */
    public long lateAfterClose(int step) {
        return lateAfterClose.get(step);
    }

    /** Duplicates for {@code step} that arrived after it closed; safe from any thread. */
    public long lateDuplicatesAfterClose(int step) {
        return lateDuplicatesAfterClose.get(step);
    }

    public int flowId() {
        return flowId;
    }

    /**
     * What one step's receive side counted for one flow.
     *
     * @param late           first arrivals of numbers already finalised as missing (behind the tracking window):
     *                       counted lost, and late
     * @param lateDuplicates arrivals behind the window of numbers already received
     * @param lostInRuns     sequence numbers below the wire end finalised as missing, summed over loss runs: an
     *                       independent count of loss that must equal sent - received
     * @param delay         one-way delay histogram (ns); values below zero are counted in negativeDelays
     * @param minTransitNs  smallest receive-minus-send difference (for offset-free delay across hosts)
     */
    public record Summary(int step, long received, long duplicates, long reordered, long late,
                          long lateDuplicates, long corrupt,
                          long warmup, long lossEvents, long lostInRuns, LossBurst lossBurst, Histogram delay,
                          Histogram ipdv, double jitterNs, long negativeDelays, long minTransitNs) {

        /** The delay distribution; offset-free ones say so (see {@link FlowReceiver#offsetFree}). */
        public Latency delayLatency(boolean offsetFree) {
            return offsetFree ? Latency.excessOverMin(delay) : Latency.of(delay, null);
        }
    }
}
