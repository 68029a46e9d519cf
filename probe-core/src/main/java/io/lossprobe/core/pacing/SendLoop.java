package io.lossprobe.core.pacing;

import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.plan.SendPattern;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntToLongFunction;
import org.HdrHistogram.Histogram;

/**
 * Paces every flow of one step through its schedule: a warm-up phase (messages marked warm-up, not counted),
 * then the measured window. Each {@link #doWork} sends whatever is due, up to a batch limit per flow, and flushes
 * each flow once, so a transport can turn a batch into one sendmmsg. The clock is passed in, so tests drive it step
 * by step; nothing here blocks, reads a file or talks to another host.
 *
 * <p>Two counters per flow, kept apart: the schedule index (which message of the schedule is next: its intended
 * send time, and {@code behind}) and the wire sequence (the number the next accepted message carries). A message
 * the transport {@link MessageWriter#REFUSED} moves the schedule on but takes no wire sequence, so the wire
 * sequences of a step are dense: {@code [0, sent + failed)}, where failed are accepted messages the transport later
 * reported as never sent ({@link FailedRanges}).
 *
 * <p>The window's start is only published ({@link #windowStarted()}); whoever samples counters at that moment does
 * it on its own thread.
 */
public final class SendLoop {
    private static final long HIGHEST_LAG_NS = Latency.HIGHEST_TRACKABLE_NS;

    private final MessageWriter[] writers;
    private final long[] flowRates;
    private final long warmupNs;
    private final long windowNs;
    private final int batchLimit;
    private final SendFilter filter;
    private final FailedRanges[] failures;
    private final MessageAuth auth;
    private final long[] word0Data;
    private final long[] word0Warmup;
    private final long word1;

    private final FlowSchedule[] schedules;
    /** Per flow: the next message of the phase's schedule. */
    private final long[] issued;
    /** Per flow: the wire sequence the next accepted message carries. */
    private final long[] wireSequence;
    private final long[] refused;
    private final Histogram lag = Latency.newHistogram();
    private final AtomicLong sentProgress = new AtomicLong();
    /** Window messages put on the wire so far, over all flows (what {@link #sentProgress} publishes). */
    private long onWireTotal;
    /** When the current cycle began (the time {@link #doWork} was given). */
    private long cycleStartNs;
    /** Whether a write of the current cycle, and of the one before, answered BLOCKED. */
    private boolean cycleBlocked;
    private boolean lastCycleBlocked;
    /** Window figures: writes answered BLOCKED, time from a blocked cycle to the next, time inside cycles. */
    private long blockedSends;
    /** In the window: flushes that handed messages over, the messages they handed, the most one handed. */
    private long handOffs;
    private long handOffMessages;
    private long largestHandOff;
    private long heldNs;
    private long sendCallNs;

    private boolean warming;
    private boolean started;
    private long startNs;
    private volatile boolean windowStarted;
    private volatile boolean done;
    private volatile boolean abortRequested;
    private long windowStartNs;
    private long finishedNs;
    private int firstFlow;
    /** Echo mode's closed loop; null when open loop. */
    private ClosedLoop closedLoop;
    /** Per flow: how far its schedule starts after the phase's start (all 0 unless staggered). */
    private final long[] offsetNs;
    private final int step;
    private SendPattern pattern = SendPattern.CONSTANT;
    private long seed;
    /** The size mix's lookup, or null: every message carries {@link #word1}. */
    private io.lossprobe.core.plan.SizeMix.Table sizes;
    /** With a size mix: the second header word of each of its sizes (the length is in it). */
    private long[] word1BySize;

    /**
     * @param flowRates  messages per second for each flow; 0 for every flow means "max"
     * @param batchLimit most messages one flow sends in one {@code doWork}, so no flow starves the others
     * @param failures   per flow, where the transport's late failures of this step are recorded (null: none)
     * @param auth       the run's key: every message is tagged with it
     */
    public SendLoop(MessageWriter[] writers, int runId, int step, int messageLength, long[] flowRates,
                    long warmupNs, long windowNs, int batchLimit, SendFilter filter, FailedRanges[] failures,
                    MessageAuth auth) {
        this.auth = java.util.Objects.requireNonNull(auth, "auth");
        if (writers.length != flowRates.length || (failures != null && failures.length != writers.length)) {
            throw new IllegalArgumentException("one rate and one failure ledger per writer");
        }
        this.writers = writers.clone();
        this.flowRates = flowRates.clone();
        this.warmupNs = warmupNs;
        this.windowNs = windowNs;
        this.batchLimit = batchLimit;
        this.filter = filter == null ? SendFilter.NONE : filter;
        int n = writers.length;
        this.failures = failures != null ? failures.clone() : new FailedRanges[n];
        for (int i = 0; i < n; i++) {
            if (this.failures[i] == null) {
                this.failures[i] = new FailedRanges();
            }
        }
        this.schedules = new FlowSchedule[n];
        this.issued = new long[n];
        this.wireSequence = new long[n];
        this.refused = new long[n];
        this.word0Data = new long[n];
        this.word0Warmup = new long[n];
        for (int i = 0; i < n; i++) {
            word0Data[i] = MessageHeader.word0(MessageHeader.KIND_DATA, i);
            word0Warmup[i] = MessageHeader.word0(MessageHeader.KIND_WARMUP, i);
        }
        this.word1 = MessageHeader.word1(runId, step, messageLength);
        this.offsetNs = new long[n];
        this.step = step;
    }

    /**
     * Spreads each phase's messages by {@code pattern} (before {@link #start}; default constant), random patterns
     * drawing from {@code seed}: each flow's phase has its own key ({@link FlowSchedule#key}).
     */
    public void pattern(SendPattern sendPattern, long patternSeed) {
        this.pattern = java.util.Objects.requireNonNull(sendPattern, "pattern");
        this.seed = patternSeed;
    }

    /**
     * Gives each message the size {@code mix} assigns its flow and wire sequence number (before {@link #start}; the
     * length is in the header's second word, which the writers send that many bytes of). Null: every message is the
     * loop's message length.
     */
    public void sizeMix(io.lossprobe.core.plan.SizeMix mix) {
        if (mix == null) {
            sizes = null;
            word1BySize = null;
            return;
        }
        sizes = mix.table();
        word1BySize = new long[sizes.sizes()];
        for (int i = 0; i < word1BySize.length; i++) {
            word1BySize[i] = (word1 & ~0xFFFFL) | sizes.lengthOf(i);
        }
    }

    /** The pattern each phase's schedules follow. */
    public SendPattern pattern() {
        return pattern;
    }

    /** The key of flow {@code flow}'s window schedule ({@link FlowSchedule#of}), to rebuild it. */
    public long windowKey(int flow) {
        return FlowSchedule.key(seed, step, flow, FlowSchedule.WINDOW);
    }

    /**
     * Staggers the flows (before {@link #start}) so their messages fall due one at a time, evenly spaced
     * ({@link FlowSchedule#staggerOffsets}). No effect at "max".
     */
    public void staggerFlows() {
        FlowSchedule.staggerOffsets(flowRates, offsetNs);
    }

    /**
     * Closed loop (echo mode, {@link ClosedLoop}): at most {@code concurrency} requests outstanding per flow, those
     * without a reply for {@code replyTimeoutNs} (Tmax) given up on. A concurrency of 0 leaves the loop open.
     */
    public void closedLoop(int concurrency, IntToLongFunction repliesOf, long replyTimeoutNs) {
        closedLoop = concurrency > 0 ? new ClosedLoop(writers.length, concurrency, repliesOf, replyTimeoutNs) : null;
    }

    /**
     * Starts the warm-up (or the window, when there is no warm-up) at {@code nowNs}; returns when the window
     * begins, on the same clock.
     */
    public long start(long nowNs) {
        started = true;
        startNs = nowNs;
        if (warmupNs > 0) {
            warming = true;
            resetSchedules(nowNs, warmupNs, FlowSchedule.WARMUP);
        } else {
            beginWindow(nowNs);
        }
        return nowNs + warmupNs;
    }

    private void beginWindow(long startNs) {
        warming = false;
        onWireTotal = 0;
        windowStartNs = startNs;
        resetSchedules(startNs, windowNs, FlowSchedule.WINDOW);
        Arrays.fill(refused, 0);
        blockedSends = 0;
        handOffs = 0;
        handOffMessages = 0;
        largestHandOff = 0;
        heldNs = 0;
        sendCallNs = 0;
        lastCycleBlocked = false;
        if (closedLoop != null) {
            closedLoop.beginWindow(startNs);
        }
        windowStarted = true;
    }

    private void resetSchedules(long startNs, long durationNs, int phase) {
        for (int i = 0; i < schedules.length; i++) {
            // A staggered flow's phase is as long as the others' but starts later: same count, same end bound.
            schedules[i] = FlowSchedule.of(pattern, startNs + offsetNs[i], durationNs, flowRates[i],
                FlowSchedule.key(seed, step, i, phase));
            issued[i] = 0;
            wireSequence[i] = 0;
        }
    }

    /** Sends what is due at {@code nowNs}; returns the number of messages handed to the transport. */
    public int doWork(long nowNs) {
        if (!started) {
            start(nowNs);
        }
        if (done) {
            return 0;
        }
        if (lastCycleBlocked && !warming) {
            heldNs += nowNs - cycleStartNs; // the transport would not take a message: held until now
        }
        cycleStartNs = nowNs;
        cycleBlocked = false;
        if (abortRequested) {
            finish(nowNs);
            return 0;
        }
        if (warming && nowNs >= startNs + warmupNs) {
            beginWindow(startNs + warmupNs);
        }
        // Past the window's end, one last pass sends what fell due inside it (a late wake-up is not lag).
        boolean windowOver = !warming && nowNs >= windowStartNs + windowNs;
        int n = writers.length;
        int work = 0;
        boolean allIssued = !warming;
        for (int k = 0; k < n; k++) {
            int flow = firstFlow + k < n ? firstFlow + k : firstFlow + k - n;
            work += sendDue(flow, nowNs);
            if (issued[flow] < schedules[flow].scheduled()) {
                allIssued = false;
            }
        }
        firstFlow = firstFlow + 1 < n ? firstFlow + 1 : 0;
        lastCycleBlocked = cycleBlocked;
        if (allIssued || windowOver) {
            finish(nowNs);
        }
        return work;
    }

    private int sendDue(int flow, long nowNs) {
        FlowSchedule schedule = schedules[flow];
        long next = issued[flow];
        long due = schedule.dueBy(nowNs);
        if (due <= next) {
            return 0;
        }
        long count = Math.min(due - next, batchLimit);
        if (closedLoop != null && !warming) {
            count = Math.min(count, closedLoop.allowance(flow, wireSequence[flow], nowNs));
            if (count <= 0) {
                return 0;
            }
        }
        boolean unlimited = schedule.unlimited();
        boolean counted = !warming;
        MessageWriter writer = writers[flow];
        long w0 = warming ? word0Warmup[flow] : word0Data[flow];
        long wire = wireSequence[flow];
        long index = next;
        int handed = 0;
        for (long end = next + count; index < end; index++) {
            long intended = unlimited ? nowNs : schedule.intendedTimeNs(index);
            if (counted && filter.drop(flow, wire)) {
                wire++; // counted as sent, never handed over: lost on the way, exactly
                continue;
            }
            long w1 = sizes == null ? word1 : word1BySize[sizes.index(flow, wire)];
            int outcome = counted && filter.refuse(flow, index) ? MessageWriter.REFUSED
                : writer.write(w0, w1, wire, intended, nowNs, auth.tag(w0, w1, wire, intended, nowNs));
            if (outcome == MessageWriter.BLOCKED) {
                if (counted) {
                    blockedSends++;
                    cycleBlocked = true;
                }
                break;
            }
            if (outcome == MessageWriter.ACCEPTED) {
                wire++;
            } else if (counted) {
                refused[flow]++;
            }
            if (counted && !unlimited) {
                // Per message: how late it was handed over, against its own intended time.
                lag.recordValue(Math.min(HIGHEST_LAG_NS, Math.max(0, nowNs - intended)));
            }
            handed++;
        }
        issued[flow] = index;
        if (counted) {
            onWireTotal += wire - wireSequence[flow];
            // Published before the flush, so a reader that reads the receivers first never sees more received.
            sentProgress.lazySet(onWireTotal);
        }
        wireSequence[flow] = wire;
        if (handed > 0) {
            if (counted) {
                // What left together: a burst pattern's group handed over whole is one hand-off of its size.
                handOffs++;
                handOffMessages += handed;
                largestHandOff = Math.max(largestHandOff, handed);
            }
            writer.flush();
            if (closedLoop != null) {
                closedLoop.sent(flow, nowNs);
            }
        }
        return handed;
    }

    private void finish(long nowNs) {
        for (MessageWriter writer : writers) {
            writer.flush();
        }
        finishedNs = nowNs;
        done = true;
    }

    /**
     * The cycle {@link #doWork} began ended at {@code endNs} (the driver's own next clock reading, not an extra one):
     * in the window its length counts in {@link #sendCallNs}.
     */
    public void cycleEnded(long endNs) {
        if (!warming && started) {
            sendCallNs += endNs - cycleStartNs;
        }
    }

    /** Asks the loop to stop at its next cycle (Ctrl-C); safe from any thread. */
    public void abort() {
        abortRequested = true;
    }

    public boolean isDone() {
        return done;
    }

    /** True once the measured window has begun; safe from any thread. */
    public boolean windowStarted() {
        return windowStarted;
    }

    /**
     * When the next message falls due, for transports that can sleep between cycles. Returns {@code nowNs} when
     * something is due already (or the schedule is unlimited).
     */
    public long nextDueNs(long nowNs) {
        if (closedLoop != null && !warming) {
            return nowNs + ClosedLoop.POLL_NS; // replies arrive on their own time: look again shortly
        }
        if (warming) {
            return Math.min(nextDueInPhase(nowNs), startNs + warmupNs);
        }
        return Math.min(nextDueInPhase(nowNs), windowStartNs + windowNs);
    }

    private long nextDueInPhase(long nowNs) {
        long earliest = Long.MAX_VALUE;
        for (int i = 0; i < schedules.length; i++) {
            FlowSchedule s = schedules[i];
            if (s.unlimited()) {
                return nowNs;
            }
            if (issued[i] < s.scheduled()) {
                earliest = Math.min(earliest, s.intendedTimeNs(issued[i]));
            }
        }
        return Math.max(nowNs, earliest);
    }

    /** Messages put on the wire so far in the window (accepted, before late failures); safe from any thread. */
    public long sentProgress() {
        return sentProgress.get();
    }

    /** The window as it really ran: its nominal length, or longer when the loop stopped late. */
    public long windowNs() {
        return Math.max(windowNs, finishedNs - windowStartNs);
    }

    /**
     * Per-flow counts, with the late failures recorded so far; call after {@link #isDone()} (on any thread: the
     * loop's fields are published by the future that completes when it is done).
     */
    public FlowSendCounts counts(int flow) {
        long onWire = warming ? 0 : wireSequence[flow];
        long failed = failures[flow].total();
        long sent = onWire - failed;
        long sendFailed = refused[flow] + failed;
        long scheduled = schedules[flow] == null || schedules[flow].unlimited() || warming
            ? sent + sendFailed : schedules[flow].scheduled();
        return new FlowSendCounts(scheduled, sent, sendFailed, scheduled - sent - sendFailed);
    }

    /** The failure ledger of {@code flow} for this step. */
    public FailedRanges failures(int flow) {
        return failures[flow];
    }

    /** How far flow {@code flow}'s schedule starts after the phase's start (0 unless {@link #staggerFlows}). */
    public long offsetNs(int flow) {
        return offsetNs[flow];
    }

    public int flows() {
        return writers.length;
    }

    /** Flushes in the window that handed a flow's messages to the transport together (one or more). */
    public long handOffs() {
        return handOffs;
    }

    /** Messages those hand-offs carried. */
    public long handOffMessages() {
        return handOffMessages;
    }

    /** The most messages one hand-off carried (a burst's size as it left; at most the batch limit). */
    public long largestHandOff() {
        return largestHandOff;
    }

    /** Writes in the window the transport answered {@link MessageWriter#BLOCKED} (each retried later). */
    public long blockedSends() {
        return blockedSends;
    }

    /**
     * Time in the window from the start of each cycle in which a write was {@link MessageWriter#BLOCKED} to the
     * start of the next: how long the transport held the sender back.
     */
    public long heldNs() {
        return heldNs;
    }

    /**
     * Time in the window inside the loop's cycles (each message's tag and write, each flow's flush), from the clock
     * readings that begin and end each cycle. A transport that makes its system call in a task queued behind the
     * cycle (UDP's native path: one sendmmsg per cycle) spends that outside it.
     */
    public long sendCallNs() {
        return sendCallNs;
    }

    /** How late each window message was handed to the transport, against its intended send time. */
    public Latency lag() {
        return Latency.of(lag);
    }
}
