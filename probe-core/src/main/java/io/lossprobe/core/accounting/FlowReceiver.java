package io.lossprobe.core.accounting;

import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.LossBurst;
import io.lossprobe.core.result.SignedHistogram;
import io.lossprobe.core.wire.MessageAuth;
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
 * {@code ReceiverEndpoint.onFlowThreads}); {@link #progress()} and {@link #lateAfterClose} may be read
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
    private final MessageAuth auth;

    private final SignedHistogram delay = new SignedHistogram();
    /** Arrival minus the actual send time: the path and the stacks, without the sender's lag. */
    private final SignedHistogram transit = new SignedHistogram();
    private final Histogram ipdv = Latency.newHistogram();
    private SequenceTracker tracker;
    /** Closed steps' late-arrival classifiers and wire ends, the last {@value #CLOSED_STEPS_KEPT} steps. */
    private final java.util.Map<Integer, ClosedStep> closedSteps = new java.util.LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(java.util.Map.Entry<Integer, ClosedStep> eldest) {
            return size() > CLOSED_STEPS_KEPT;
        }
    };
    /** Closed steps whose late arrivals are still told apart; an arrival for an older step is counted foreign. */
    static final int CLOSED_STEPS_KEPT = 16;
    private int step = -1;
    private boolean open;
    private long corrupt;
    private long foreign;
    private long warmup;
    private long lastDelay;
    private boolean haveDelay;
    private double jitter;
    private io.lossprobe.core.accounting.SendFilter replyFilter = io.lossprobe.core.accounting.SendFilter.NONE;
    /** Receiver clock minus sender clock for the open step (0 on one host). */
    private long clockOffsetNs;
    private long warmupMinDelay = Long.MAX_VALUE;
    private long warmupDelays;
    /**
     * The open step's per-interval counts, or null: set from the engine's thread before the window's first message
     * is sent (volatile, so the receiving thread sees it without a lock), read back once the step closed.
     */
    private volatile IntervalTally intervals;
    /** The open step's per-message record ({@code --packets}), or null: set like {@link #intervals}. */
    private volatile PacketSlots packets;
    /** Arrivals of the open step whose delay used a kernel receive timestamp. */
    private long stamped;
    /** With a size mix: which size each sequence number has, and the open step's first arrivals per size. */
    private io.lossprobe.core.plan.SizeMix.Table sizes;
    private long[] receivedBySize;

    /**
     * @param steps   number of steps in the run, so late arrivals for any closed step can be counted
     * @param replies true for the requester's side of echo mode: the messages counted are replies
     *                ({@link MessageHeader#KIND_ECHO}) and their delay is the round trip on one clock
     * @param auth    the run's key: a message whose tag does not verify is foreign
     */
    public FlowReceiver(int flowId, int runId, int messageLength, int steps, boolean replies, MessageAuth auth) {
        this.auth = java.util.Objects.requireNonNull(auth, "auth");
        this.dataKind = replies ? MessageHeader.KIND_ECHO : MessageHeader.KIND_DATA;
        this.flowId = flowId;
        this.runId = runId;
        this.messageLength = messageLength;
        this.lateAfterClose = new AtomicLongArray(Math.max(1, steps));
        this.lateDuplicatesAfterClose = new AtomicLongArray(Math.max(1, steps));
    }

    /** The key this flow's messages verify under (a transport derives identifiers of its own framing from it). */
    public MessageAuth auth() {
        return auth;
    }

    /**
     * Test seam for echo mode: a message the filter picks is counted as usual but reported as not to be answered,
     * so its reply is lost on the way back, exactly.
     */
    public void replyFilter(io.lossprobe.core.accounting.SendFilter filter) {
        this.replyFilter = filter == null ? io.lossprobe.core.accounting.SendFilter.NONE : filter;
    }

    /**
     * Messages mix sizes by {@code mix} (before the first step; null: every message is the flow's message length,
     * which is then the mix's largest): each must have the length its sequence number has, and the first arrivals
     * are counted per size.
     */
    public void sizeMix(io.lossprobe.core.plan.SizeMix mix) {
        if (mix != null && mix.largest() != messageLength) {
            throw new IllegalArgumentException("a size mix's largest size must be the flow's message length");
        }
        this.sizes = mix == null ? null : mix.table();
        this.receivedBySize = mix == null ? null : new long[sizes.sizes()];
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
        beginStep(step, windowBits, failed, 0);
    }

    /**
     * As {@link #beginStep(int, int, FailedRanges)}, for a sender on another host: every delay is corrected by
     * {@code clockOffsetNs}, this host's clock minus the sender's (estimated over the control channel), so it is a
     * one-way delay true to that estimate's uncertainty; it may come out below zero and is never clamped.
     */
    public void beginStep(int step, int windowBits, FailedRanges failed, long clockOffsetNs) {
        this.step = step;
        this.clockOffsetNs = clockOffsetNs;
        this.tracker = new SequenceTracker(windowBits, failed);
        this.open = true;
        corrupt = 0;
        foreign = 0;
        warmup = 0;
        delay.reset();
        transit.reset();
        ipdv.reset();
        haveDelay = false;
        jitter = 0;
        warmupMinDelay = Long.MAX_VALUE;
        warmupDelays = 0;
        intervals = null;
        packets = null;
        stamped = 0;
        if (receivedBySize != null) {
            java.util.Arrays.fill(receivedBySize, 0);
        }
        progress.lazySet(0);
    }

    /**
     * Counts the open step per interval into {@code tally} as well (after {@link #beginStep}, before the window's
     * first message is sent); safe from any thread.
     */
    public void countIntervals(IntervalTally tally) {
        this.intervals = tally;
    }

    /**
     * Records the open step message by message into {@code slots} as well (after {@link #beginStep}, before the
     * window's first message is sent), and the step's arrivals after it closed; safe from any thread.
     */
    public void capturePackets(PacketSlots slots) {
        this.packets = slots;
    }

    /**
     * Accounts one message: its six header words as read, the bytes delivered and the arrival time.
     *
     * <p>A message whose header does not parse as this run's and flow's (magic, version, run id, flow id, length)
     * is {@code corrupt}. One that parses but whose tag does not verify under the run's key was not sent by this
     * run's sender (forged, or modified on the way): it is {@code foreign}, never received, never answered, and
     * it moves nothing (not the tracker's window, not the delay's baseline). The tag is checked before the bytes
     * delivered and the sequence: a message of ours that arrived truncated is corrupt, a forged one foreign.
     *
     * @param length    bytes the transport actually delivered for this message
     * @param arrivalNs receive time on this host's {@link System#nanoTime()} clock, read by the receiving thread
     * @return true when the message is to be answered in echo mode: the first arrival of a message of the open
     *         step, or a warm-up message of the open step on the responder (answered as a warm-up, see
     *         {@link MessageHeader#replyOf}, so the reply path is warm when the window starts); duplicates, late,
     *         corrupt and foreign messages are not answered
     */
    public boolean onMessage(long word0, long word1, long sequence, long sendTimeNs, long actualSendNs, long tag,
                             int length, long arrivalNs) {
        return onMessage(word0, word1, sequence, sendTimeNs, actualSendNs, tag, length, arrivalNs, false);
    }

    /**
     * As {@link #onMessage(long, long, long, long, long, long, int, long)}, with {@code arrivalNs} stamped by the
     * kernel when {@code kernelStamped} (SO_TIMESTAMPNS, converted to the {@link System#nanoTime()} clock): the
     * step's figures count how many of their arrivals were, so results can say which source each figure has.
     */
    public boolean onMessage(long word0, long word1, long sequence, long sendTimeNs, long actualSendNs, long tag,
                             int length, long arrivalNs, boolean kernelStamped) {
        if (!MessageHeader.isLossprobe(word0) || MessageHeader.runId(word1) != runId
            || MessageHeader.flowId(word0) != flowId
            || (sizes == null ? MessageHeader.length(word1) != messageLength
                : MessageHeader.length(word1) > messageLength)) {
            corrupt++;
            return false;
        }
        // The header parses as this flow's: only the tag tells whether our sender sent it. A message that says it is
        // ours and arrived short (or long), or carries a sequence our sender never uses, is corrupt only when its tag
        // proves it is ours; otherwise it is foreign (a spoofed short datagram is not a corrupted one of ours).
        if (!auth.verify(word0, word1, sequence, sendTimeNs, actualSendNs, tag)) {
            foreign++;
            return false;
        }
        if (sequence < 0 || (sizes == null ? length != messageLength
                : length != sizes.length(flowId, sequence) || MessageHeader.length(word1) != length)) {
            corrupt++; // with a size mix: not the length its sequence number has
            return false;
        }
        int kind = MessageHeader.kind(word0);
        int msgStep = MessageHeader.step(word1);
        if (kind == MessageHeader.KIND_WARMUP) {
            warmup++;
            if (msgStep == step && open) {
                // The step's baseline: the smallest delay its warm-up saw (wrap-safe: differences only).
                warmupMinDelay = Math.min(warmupMinDelay, (arrivalNs - sendTimeNs) - clockOffsetNs);
                warmupDelays++;
                // The responder answers its step's warm-up too (as a warm-up, never counted): measured here, with
                // warm-up requests unanswered, echo mode's first window JIT-compiled both reply paths and its
                // sender lag p99 was 0.4-0.5 ms against 0.1-0.16 ms in later steps.
                return dataKind == MessageHeader.KIND_DATA;
            }
            return false;
        }
        if (kind != dataKind) {
            corrupt++;
            return false;
        }
        if (!open || msgStep != step) {
            onClosedStep(msgStep, sequence, sendTimeNs, actualSendNs, arrivalNs);
            return false;
        }
        int outcome = tracker.onSequence(sequence);
        PacketSlots slots = packets;
        if (slots != null) {
            slots.arrived(sequence, outcome, sendTimeNs, actualSendNs, arrivalNs - clockOffsetNs);
        }
        IntervalTally tally = intervals;
        if (outcome == SequenceTracker.NEW || outcome == SequenceTracker.REORDERED) {
            long d = recordDelay(arrivalNs - sendTimeNs);
            transit.record((arrivalNs - actualSendNs) - clockOffsetNs);
            if (tally != null) {
                tally.first(sendTimeNs, outcome == SequenceTracker.REORDERED, d);
            }
            if (kernelStamped) {
                stamped++;
            }
            if (receivedBySize != null) {
                receivedBySize[sizes.index(flowId, sequence)]++;
            }
            progress.lazySet(tracker.received());
            return !replyFilter.drop(flowId, sequence);
        }
        if (outcome == SequenceTracker.DUPLICATE && tally != null) {
            tally.duplicate(sendTimeNs);
        }
        return false;
    }

    /** A data message for a step that closed: late (a first arrival, counted lost there) or a late duplicate. */
    private void onClosedStep(int msgStep, long sequence, long sendTimeNs, long actualSendNs, long arrivalNs) {
        boolean isClosed = msgStep < lateAfterClose.length() && (msgStep < step || (msgStep == step && !open));
        if (!isClosed) {
            corrupt++; // a step this receiver has not begun: not a message of this run's schedule
            return;
        }
        ClosedStep closed = closedSteps.get(msgStep);
        if (closed == null) {
            // A step closed more than CLOSED_STEPS_KEPT steps ago: no network holds a datagram that long, and
            // without the step's classifier a replay of a message that arrived cannot be told from a first
            // arrival, so it is foreign (never late: a replay must not fill that step's loss as late).
            foreign++;
            return;
        }
        if (sequence >= closed.wireEnd()) {
            corrupt++; // the sender never put this number on the wire
            return;
        }
        boolean duplicate = closed.late().classify(sequence) == SequenceTracker.LATE_DUPLICATE;
        long rank = duplicate ? lateDuplicatesAfterClose.incrementAndGet(msgStep)
            : lateAfterClose.incrementAndGet(msgStep);
        if (closed.packets() != null) {
            closed.packets().arrivedAfterClose(sequence, duplicate ? PacketSlots.AFTER_LATE_DUPLICATE
                : PacketSlots.AFTER_LATE, rank, sendTimeNs, actualSendNs, arrivalNs - closed.clockOffsetNs());
        }
    }

    /**
     * One-way delay from the intended send time, RFC 3550 jitter and RFC 3393 IPDV, none of them clamped; returns
     * the delay.
     */
    private long recordDelay(long rawTransit) {
        long d = rawTransit - clockOffsetNs;
        delay.record(d);
        if (haveDelay) {
            long v = Math.abs(d - lastDelay);
            ipdv.recordValue(Math.min(v, HIGHEST_DELAY_NS));
            jitter += (v - jitter) / 16.0; // RFC 3550 section 6.4.1
        }
        lastDelay = d;
        haveDelay = true;
        return d;
    }

    /**
     * Closes the step: every wire sequence number below {@code wireEnd} (the sender's sent plus failed) is now
     * received, lost or skipped as failed; arrivals for this step from now on count as late.
     */
    public Summary closeStep(long wireEnd) {
        open = false;
        tracker.finish(wireEnd);
        PacketSlots slots = packets;
        if (slots != null) {
            slots.closed(tracker.late(), tracker.lateDuplicates());
        }
        closedSteps.put(step, new ClosedStep(tracker.lateClassifier(), wireEnd, slots, clockOffsetNs));
        return new Summary(step, tracker.received(), tracker.duplicates(), tracker.reordered(), tracker.late(),
            tracker.lateDuplicates(), corrupt, foreign, warmup, tracker.lossEvents(), tracker.lostInRuns(),
            tracker.bursts().toResult(), delay.copy(), transit.copy(), ipdv.copy(), jitter, warmupDelays,
            warmupDelays == 0 ? 0 : warmupMinDelay, stamped,
            receivedBySize == null ? null : receivedBySize.clone(), tracker.lostSet());
    }

    /**
     * The tag of the reply to a message, for the transport that sends it back: the same words with kind
     * {@link MessageHeader#KIND_ECHO}, tagged under the run's key.
     */
    public long replyTag(long replyWord0, long word1, long sequence, long sendTimeNs, long actualSendNs) {
        return auth.tag(replyWord0, word1, sequence, sendTimeNs, actualSendNs);
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

    private record ClosedStep(SequenceTracker.LateClassifier late, long wireEnd, PacketSlots packets,
                              long clockOffsetNs) {
    }

    /**
     * What one step's receive side counted for one flow.
     *
     * @param late           first arrivals of numbers already finalised as missing (behind the tracking window):
     *                       counted lost, and late
     * @param lateDuplicates arrivals behind the window of numbers already received
     * @param foreign        arrivals that parsed as this run's but were not its sender's (tag not verified)
     * @param lostInRuns     sequence numbers below the wire end finalised as missing, summed over loss runs: an
     *                       independent count of loss that must equal sent - received
     * @param delay          one-way delay from the intended send time (ns), corrected by the step's clock offset
     *                       between hosts; may hold values below zero
     * @param transit        arrival minus the actual send time (the sender's lag left out), corrected alike
     * @param warmupDelays   delays the step's warm-up saw (the baseline's sample count)
     * @param warmupMinDelayNs the smallest of them: the flow's baseline between hosts (0 when there were none)
     * @param kernelStamped  how many of the delays (and transits) used a kernel receive timestamp; the rest were
     *                       read by the receiving thread
     * @param receivedBySize with a size mix, {@code received} split by the mix's sizes (in the mix's order); else
     *                       null
     * @param lostSet        the numbers counted lost ({@link SequenceTracker#lostSet}); null where not kept (a
     *                       receiver on another host asked for none)
     */
    public record Summary(int step, long received, long duplicates, long reordered, long late,
                          long lateDuplicates, long corrupt, long foreign, long warmup, long lossEvents,
                          long lostInRuns,
                          LossBurst lossBurst, SignedHistogram delay, SignedHistogram transit, Histogram ipdv,
                          double jitterNs,
                          long warmupDelays, long warmupMinDelayNs, long kernelStamped, long[] receivedBySize,
                          LostSet lostSet) {
        /** A summary without its lost set. */
        public Summary(int step, long received, long duplicates, long reordered, long late,
                       long lateDuplicates, long corrupt, long foreign, long warmup, long lossEvents,
                       long lostInRuns,
                       LossBurst lossBurst, SignedHistogram delay, SignedHistogram transit, Histogram ipdv,
                       double jitterNs,
                       long warmupDelays, long warmupMinDelayNs, long kernelStamped, long[] receivedBySize) {
            this(step, received, duplicates, reordered, late, lateDuplicates, corrupt, foreign, warmup, lossEvents,
                lostInRuns, lossBurst, delay, transit, ipdv, jitterNs, warmupDelays, warmupMinDelayNs, kernelStamped,
                receivedBySize, null);
        }

        /** A summary of a flow whose messages are of one size. */
        public Summary(int step, long received, long duplicates, long reordered, long late,
                       long lateDuplicates, long corrupt, long foreign, long warmup, long lossEvents,
                       long lostInRuns,
                       LossBurst lossBurst, SignedHistogram delay, SignedHistogram transit, Histogram ipdv,
                       double jitterNs,
                       long warmupDelays, long warmupMinDelayNs, long kernelStamped) {
            this(step, received, duplicates, reordered, late, lateDuplicates, corrupt, foreign, warmup, lossEvents,
                lostInRuns, lossBurst, delay, transit, ipdv, jitterNs, warmupDelays, warmupMinDelayNs, kernelStamped,
                null);
        }

        /** Where this flow's arrival times came from: {@code kernel}, {@code user}, {@code mixed} (null: none). */
        public String timestampSource() {
            return io.lossprobe.core.transport.Timing.sourceOf(kernelStamped, delay.count());
        }
    }
}
