package io.lossprobe.core.pacing;

import io.lossprobe.core.result.Latency;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.wire.MessageHeader;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * Paces every flow of one step through its schedule: a warm-up phase (messages marked warm-up, not counted),
 * then the measured window. Each {@link #doWork} sends whatever is due, up to a batch limit per flow, and flushes
 * each flow once, so a transport can turn a batch into one sendmmsg. Transports call {@code doWork} from their
 * sending thread until {@link #isDone()}; the clock is passed in, so tests drive it step by step.
 */
public final class SendLoop {
    private static final long HIGHEST_LAG_NS = Latency.HIGHEST_TRACKABLE_NS;

    private final MessageWriter[] writers;
    private final long[] flowRates;
    private final long warmupNs;
    private final long windowNs;
    private final int batchLimit;
    private final SendFilter filter;
    private final long[] word0Data;
    private final long[] word0Warmup;
    private final long word1;

    private final FlowSchedule[] schedules;
    private final long[] issued;
    private final long[] accepted;
    private final long[] refused;
    private final long[] failedBaseline;
    private final Histogram lag = Latency.newHistogram();
    private final AtomicLong sentProgress = new AtomicLong();

    private boolean warming;
    private boolean started;
    private volatile boolean done;
    private volatile boolean abortRequested;
    private long windowStartNs;
    private long finishedNs;
    private int firstFlow;
    private Runnable onWindowStart = () -> { };
    private int concurrency;
    private java.util.function.IntToLongFunction repliesOf;
    private long replyTimeoutNs;
    private long[] expired;
    private long[] lastReplies;
    private long[] lastActivityNs;

    /**
     * @param flowRates  messages per second for each flow; 0 for every flow means "max"
     * @param batchLimit most messages one flow sends in one {@code doWork}, so no flow starves the others
     */
    public SendLoop(MessageWriter[] writers, int runId, int step, int messageLength, long[] flowRates,
                    long warmupNs, long windowNs, int batchLimit, SendFilter filter) {
        if (writers.length != flowRates.length) {
            throw new IllegalArgumentException("one rate per writer");
        }
        this.writers = writers.clone();
        this.flowRates = flowRates.clone();
        this.warmupNs = warmupNs;
        this.windowNs = windowNs;
        this.batchLimit = batchLimit;
        this.filter = filter == null ? SendFilter.NONE : filter;
        int n = writers.length;
        this.schedules = new FlowSchedule[n];
        this.issued = new long[n];
        this.accepted = new long[n];
        this.refused = new long[n];
        this.failedBaseline = new long[n];
        this.word0Data = new long[n];
        this.word0Warmup = new long[n];
        for (int i = 0; i < n; i++) {
            word0Data[i] = MessageHeader.word0(MessageHeader.KIND_DATA, i);
            word0Warmup[i] = MessageHeader.word0(MessageHeader.KIND_WARMUP, i);
        }
        this.word1 = MessageHeader.word1(runId, step, messageLength);
    }

    /**
     * Runs {@code action} on the sending thread at the moment the warm-up ends and the window begins, before the
     * window's first message: counters sampled there exclude every warm-up message this thread sent.
     */
    public void onWindowStart(Runnable action) {
        this.onWindowStart = action;
    }

    /**
     * Closed loop (echo mode): at most {@code concurrency} requests outstanding per flow, where outstanding is
     * issued minus {@code repliesOf(flow)} minus those given up on. When a flow has neither sent nor heard a reply
     * for {@code replyTimeoutNs} (Tmax), its outstanding requests are given up on (they count as lost in the
     * accounting anyway) so the flow can go on.
     */
    public void closedLoop(int concurrency, java.util.function.IntToLongFunction repliesOf, long replyTimeoutNs) {
        this.concurrency = concurrency;
        this.repliesOf = repliesOf;
        this.replyTimeoutNs = replyTimeoutNs;
        this.expired = new long[writers.length];
        this.lastReplies = new long[writers.length];
        this.lastActivityNs = new long[writers.length];
    }

    /** Starts the warm-up (or the window, when there is no warm-up) at {@code nowNs}. */
    public void start(long nowNs) {
        started = true;
        for (int i = 0; i < writers.length; i++) {
            failedBaseline[i] = writers[i].failedAfterAccept();
        }
        if (warmupNs > 0) {
            warming = true;
            resetSchedules(nowNs, warmupNs);
        } else {
            beginWindow(nowNs);
        }
    }

    private void beginWindow(long startNs) {
        warming = false;
        windowStartNs = startNs;
        resetSchedules(startNs, windowNs);
        java.util.Arrays.fill(accepted, 0);
        java.util.Arrays.fill(refused, 0);
        if (concurrency > 0) {
            java.util.Arrays.fill(expired, 0);
            java.util.Arrays.fill(lastReplies, 0);
            java.util.Arrays.fill(lastActivityNs, startNs);
        }
        for (int i = 0; i < writers.length; i++) {
            failedBaseline[i] = writers[i].failedAfterAccept();
        }
        onWindowStart.run();
    }

    private void resetSchedules(long startNs, long durationNs) {
        for (int i = 0; i < schedules.length; i++) {
            schedules[i] = new FlowSchedule(startNs, durationNs, flowRates[i]);
            issued[i] = 0;
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
        if (abortRequested) {
            finish(nowNs);
            return 0;
        }
        if (warming && nowNs >= windowStartOf()) {
            beginWindow(windowStartOf());
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
        if (!warming) {
            sentProgress.lazySet(sentSoFar());
        }
        if (allIssued || windowOver) {
            finish(nowNs);
        }
        return work;
    }

    private long windowStartOf() {
        return schedules[0].startNs() + warmupNs;
    }

    private int sendDue(int flow, long nowNs) {
        FlowSchedule schedule = schedules[flow];
        long next = issued[flow];
        long due = schedule.dueBy(nowNs);
        if (due <= next) {
            return 0;
        }
        long count = Math.min(due - next, batchLimit);
        if (concurrency > 0 && !warming) {
            count = Math.min(count, closedLoopAllowance(flow, nowNs));
            if (count <= 0) {
                return 0;
            }
        }
        boolean unlimited = schedule.unlimited();
        if (!warming && !unlimited) {
            lag.recordValue(Math.min(HIGHEST_LAG_NS, Math.max(0, nowNs - schedule.intendedTimeNs(next))));
        }
        MessageWriter writer = writers[flow];
        long w0 = warming ? word0Warmup[flow] : word0Data[flow];
        int sentNow = 0;
        for (long seq = next; seq < next + count; seq++) {
            long intended = unlimited ? nowNs : schedule.intendedTimeNs(seq);
            if (!warming && filter.drop(flow, seq)) {
                accepted[flow]++;
                issued[flow] = seq + 1;
                continue;
            }
            int outcome = writer.write(w0, word1, seq, intended);
            if (outcome == MessageWriter.BLOCKED) {
                break;
            }
            if (!warming) {
                if (outcome == MessageWriter.ACCEPTED) {
                    accepted[flow]++;
                } else {
                    refused[flow]++;
                }
            }
            issued[flow] = seq + 1;
            sentNow++;
        }
        if (sentNow > 0) {
            writer.flush();
            if (concurrency > 0) {
                lastActivityNs[flow] = nowNs;
            }
        }
        return sentNow;
    }

    private long closedLoopAllowance(int flow, long nowNs) {
        long replies = repliesOf.applyAsLong(flow);
        if (replies != lastReplies[flow]) {
            lastReplies[flow] = replies;
            lastActivityNs[flow] = nowNs;
        }
        long outstanding = issued[flow] - replies - expired[flow];
        if (outstanding > 0 && nowNs - lastActivityNs[flow] >= replyTimeoutNs) {
            expired[flow] += outstanding; // no reply within Tmax: lost, stop waiting for them
            outstanding = 0;
        }
        return concurrency - outstanding;
    }

    private void finish(long nowNs) {
        for (MessageWriter writer : writers) {
            writer.flush();
        }
        finishedNs = nowNs;
        sentProgress.lazySet(sentSoFar());
        done = true;
    }

    private long sentSoFar() {
        long sum = 0;
        for (long a : accepted) {
            sum += a;
        }
        return sum;
    }

    /** Asks the loop to stop at its next cycle (Ctrl-C); safe from any thread. */
    public void abort() {
        abortRequested = true;
    }

    public boolean isDone() {
        return done;
    }

    /**
     * When the next message falls due, for transports that can sleep between cycles. Returns {@code nowNs} when
     * something is due already (or the schedule is unlimited).
     */
    public long nextDueNs(long nowNs) {
        if (concurrency > 0 && !warming) {
            return nowNs + 20_000; // replies arrive on their own time: look again shortly
        }
        if (warming) {
            return Math.min(nextDueInPhase(nowNs), windowStartOf());
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

    /** Messages accepted so far in the window; safe from any thread. */
    public long sentProgress() {
        return sentProgress.get();
    }

    /** The window as it really ran: its nominal length, or longer when the loop stopped late. */
    public long windowNs() {
        return Math.max(windowNs, finishedNs - windowStartNs);
    }

    /** Per-flow counts; call after {@link #isDone()} on the sending thread (or after it has stopped). */
    public FlowSendCounts counts(int flow) {
        long failedLater = writers[flow].failedAfterAccept() - failedBaseline[flow];
        long sent = accepted[flow] - failedLater;
        long sendFailed = refused[flow] + failedLater;
        long scheduled = schedules[flow].unlimited() ? sent + sendFailed : schedules[flow].scheduled();
        return new FlowSendCounts(scheduled, sent, sendFailed, scheduled - sent - sendFailed);
    }

    public int flows() {
        return writers.length;
    }

    public Latency lag() {
        return Latency.of(lag, null);
    }

    /** What the sender did for one flow in the window. {@code behind = scheduled - sent - sendFailed}. */
    public record FlowSendCounts(long scheduled, long sent, long sendFailed, long behind) {
    }
}
