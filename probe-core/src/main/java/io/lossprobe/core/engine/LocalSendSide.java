package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.pacing.NanoClock;
import io.lossprobe.core.pacing.SendDriver;
import io.lossprobe.core.pacing.FlowSendCounts;
import io.lossprobe.core.pacing.SendLoop;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SendFailureListener;
import io.lossprobe.core.transport.SendPacing;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.counters.ThreadTimes;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Senders in this process: the transport's endpoint, paced by a {@link SendLoop} per step that the
 * {@link SendDriver} runs on the endpoint's sending thread.
 *
 * <p>The step's failure ledger: the transport reports accepted messages that never left through the
 * {@link SendFailureListener} this side gives it, on the sending thread; the ledger of a step stays open until
 * {@link #finish}, which closes it on that same thread, so no failure can slip between the counts and the ranges
 * the receivers skip.
 */
public final class LocalSendSide implements SendSide {
    private final SenderEndpoint endpoint;
    private final Plan plan;
    private final int runId;
    private final FlowReceiver[] replies;
    private final NanoClock clock;
    private final Ledger ledger;
    private final String targetHost;
    private final io.lossprobe.core.wire.MessageAuth auth;
    /** The sending thread's scheduler times, found once when the side opens. */
    private final ThreadTimes threadTimes;
    private SendLoop loop;
    /** The sending thread's times as the window began and as sending ended (null: not yet, or unreadable). */
    private ThreadTimes.Sample threadsAtWindow;
    private ThreadTimes.Sample threadsAtEnd;
    private long threadsAtWindowNs;
    private long threadsAtEndNs;
    private boolean endSampled;
    private CompletableFuture<Void> sending;
    /** The open step's writers that note each interval's wire range ({@code --interval}), else null. */
    private IntervalWriter[] intervalWriters;
    private long[] stepRates;
    /** {@code --packets}: every how many messages, and how many per flow, the next steps' writers note. */
    private int packetEvery;
    private int packetCapacity;
    private PacketWriter[] packetWriters;
    private long stepWindowNs;

    private LocalSendSide(SenderEndpoint endpoint, Plan plan, int runId, FlowReceiver[] replies, NanoClock clock,
                          Ledger ledger, String targetHost, io.lossprobe.core.wire.MessageAuth auth,
                          ThreadTimes threadTimes) {
        this.auth = auth;
        this.threadTimes = threadTimes;
        this.endpoint = endpoint;
        this.targetHost = targetHost;
        this.plan = plan;
        this.runId = runId;
        this.replies = replies;
        this.clock = clock;
        this.ledger = ledger;
    }

    /** Opens the transport's senders; in echo mode with accounting for the replies they get back. */
    public static LocalSendSide open(Transport transport, SenderSpec spec) throws Exception {
        return open(transport, spec, NanoClock.SYSTEM);
    }

    /**
     * As {@link #open(Transport, SenderSpec)}, pacing on {@code clock}; the sending thread's times are read from
     * the kernel on the system clock, not at all on another (they would not be on its time).
     */
    public static LocalSendSide open(Transport transport, SenderSpec spec, NanoClock clock) throws Exception {
        return open(transport, spec, clock,
                clock == NanoClock.SYSTEM ? LocalSendSide::threadOf : e -> ThreadTimes.NONE);
    }

    /** As {@link #open(Transport, SenderSpec, NanoClock)}, with the sending thread's times from {@code threads}. */
    public static LocalSendSide open(Transport transport, SenderSpec spec, NanoClock clock,
                                     Function<ScheduledExecutorService, ThreadTimes> threads) throws Exception {
        Plan plan = spec.plan();
        FlowReceiver[] replies = null;
        if (plan.echo()) {
            replies = new FlowReceiver[plan.ports()];
            for (int i = 0; i < replies.length; i++) {
                replies[i] = new FlowReceiver(i, spec.runId(), plan.messageSize(), plan.stepsPerTransport(), true,
                    spec.auth());
            }
        }
        Ledger ledger = new Ledger(plan.ports());
        SenderSpec full = new SenderSpec(plan, spec.targetHost(), spec.runId(), spec.options(), replies, ledger,
            spec.auth(), spec.reach(), spec.sourceHost());
        SenderEndpoint endpoint = transport.openSender(full);
        if (spec.behindNat() && endpoint.sourcePorts().length == 0) {
            endpoint.close();
            throw new IllegalArgumentException(transport.name() + " senders cannot reach receivers behind a NAT:"
                + " they take no punches (docs/two-hosts.md, \"Behind a NAT\")");
        }
        return new LocalSendSide(endpoint, plan, spec.runId(), replies, clock, ledger, spec.targetHost(),
            spec.auth(), threads.apply(endpoint.sendExecutor()));
    }

    /** The times of the executor's thread, found by one task on it (before any step, never on the send loop). */
    private static ThreadTimes threadOf(ScheduledExecutorService executor) {
        try {
            return executor.submit(ThreadTimes::ofCurrentThread).get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return ThreadTimes.NONE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ThreadTimes.NONE;
        }
    }

    /** {@link SenderEndpoint#sourcePorts()}. */
    public int[] sourcePorts() {
        return endpoint.sourcePorts();
    }

    /** {@link SenderEndpoint#awaitPunches}: the flows still without a punch after {@code timeoutNs}. */
    public int[] awaitPunches(long timeoutNs) throws Exception {
        return endpoint.awaitPunches(timeoutNs);
    }

    /** Where the senders send to. */
    public String targetHost() {
        return targetHost;
    }

    @Override
    public Map<String, Long> environment() {
        return endpoint.environment();
    }

    @Override
    public void beginStep(StepStart start) throws Exception {
        int step = start.step();
        int[] windowBits = start.windowBits();
        long[] flowRates = start.flowRates();
        long windowNs = start.windowNs();
        FailedRanges[] failures = ledger.open(step, start.failures());
        if (replies != null) {
            endpoint.onReplyThread(() -> {
                for (int i = 0; i < replies.length; i++) {
                    replies[i].beginStep(step, windowBits[i], failures[i]);
                }
            });
        }
        endpoint.beginStep(step);
        MessageWriter[] writers = new MessageWriter[flowRates.length];
        int intervals = plan.intervals(windowNs);
        intervalWriters = intervals > 0 ? new IntervalWriter[writers.length] : null;
        for (int i = 0; i < writers.length; i++) {
            writers[i] = endpoint.writer(i);
            if (intervalWriters != null) {
                intervalWriters[i] = new IntervalWriter(writers[i], plan.intervalNs(), intervals);
                writers[i] = intervalWriters[i];
            }
        }
        packetWriters = packetCapacity > 0 ? new PacketWriter[writers.length] : null;
        for (int i = 0; packetWriters != null && i < writers.length; i++) {
            packetWriters[i] = new PacketWriter(writers[i], packetEvery, packetCapacity);
            writers[i] = packetWriters[i];
        }
        threadsAtWindow = null;
        threadsAtEnd = null;
        endSampled = false;
        stepRates = flowRates.clone();
        stepWindowNs = windowNs;
        // Closed loop has no warm-up: only counted requests are answered, so a warm-up could never be paced.
        long warmupNs = plan.concurrency() > 0 ? 0 : start.warmupNs();
        loop = new SendLoop(writers, runId, step, plan.messageSize(), flowRates, warmupNs, windowNs,
            SendPacing.BATCH_LIMIT, start.sendFilter(), failures, auth);
        loop.pattern(plan.sendPattern(), plan.seed());
        loop.sizeMix(plan.mix());
        if (endpoint.pacing().staggerFlows()) {
            loop.staggerFlows();
        }
        if (plan.concurrency() > 0) {
            FlowReceiver[] r = replies;
            loop.closedLoop(plan.concurrency(), flow -> r[flow].progress(), Math.max(plan.drainNs(), 1_000_000));
        }
        sending = null;
    }

    @Override
    public void capturePackets(int every, int capacity) {
        this.packetEvery = every;
        this.packetCapacity = capacity;
    }

    @Override
    public SentTimes[] sentTimes() {
        if (packetWriters == null) {
            return null;
        }
        SentTimes[] out = new SentTimes[packetWriters.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = packetWriters[i].times();
        }
        return out;
    }

    @Override
    public FailedRanges[] failures() {
        return ledger.current();
    }

    @Override
    public long start() {
        return start(clock.nanoTime());
    }

    /** Nothing is due before {@code atNs}: the loop's schedules begin there, so the driver waits for it. */
    @Override
    public long start(long atNs) {
        long windowStart = loop.start(atNs);
        if (intervalWriters != null) {
            for (IntervalWriter w : intervalWriters) {
                w.windowStartsAt(windowStart);
            }
        }
        sending = SendDriver.drive(loop, endpoint.sendExecutor(), endpoint.pacing().atRate(stepRate()), clock);
        return windowStart;
    }

    /** Messages per second the step sends over every flow: the sending thread's rate. */
    private double stepRate() {
        double sum = 0;
        for (long r : stepRates) {
            sum += r;
        }
        return sum;
    }

    @Override
    public void beginWindow() throws Exception {
        // First, on the engine's thread: the sending thread's times the window's figures start from (once sending
        // has ended, as when it ended before the window, the window has nothing to show).
        threadsAtWindowNs = clock.nanoTime();
        threadsAtWindow = endSampled ? threadsAtEnd : threadTimes.sample();
        if (endSampled) {
            threadsAtWindowNs = threadsAtEndNs;
        }
        endpoint.beginWindow();
    }

    @Override
    public boolean awaitDone(long timeoutNs) throws Exception {
        if (!clock.await(sending, timeoutNs)) {
            return false;
        }
        try {
            sending.get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("sender failed: " + e.getCause(), e.getCause());
        }
        sampleEnd();
        return true;
    }

    /** The sending thread's times as sending ended: once per step, on the engine's thread. */
    private void sampleEnd() {
        if (!endSampled) {
            endSampled = true;
            threadsAtEndNs = clock.nanoTime();
            threadsAtEnd = threadTimes.sample();
        }
    }

    /** What the step's sending cost its thread, over the window. */
    private SenderLoad load() {
        sampleEnd();
        boolean known = threadsAtWindow != null && threadsAtEnd != null;
        long spanNs = threadsAtWindow == null && threadsAtEnd == null ? loop.windowNs()
            : Math.max(0, threadsAtEndNs - threadsAtWindowNs);
        return new SenderLoad(spanNs, known ? threadsAtEnd.runQueueNs() - threadsAtWindow.runQueueNs() : null,
            known ? threadsAtEnd.cpuNs() - threadsAtWindow.cpuNs() : null, loop.sendCallNs(), loop.heldNs(),
            loop.blockedSends(), loop.handOffs(), loop.handOffMessages(), loop.largestHandOff());
    }

    @Override
    public long sentProgress() {
        return loop == null ? 0 : loop.sentProgress();
    }

    @Override
    public void abort() {
        if (loop != null) {
            loop.abort();
        }
    }

    @Override
    public long[] sent() {
        long[] out = new long[loop.flows()];
        for (int i = 0; i < out.length; i++) {
            out[i] = loop.counts(i).sent();
        }
        return out;
    }

    @Override
    public Outcome finish() throws Exception {
        FlowSendCounts[] counts = new FlowSendCounts[loop.flows()];
        // On the sending thread, where failures are reported: after this no failure joins the step's ledger.
        java.util.concurrent.Future<Long> closing = endpoint.sendExecutor().submit(() -> {
            ledger.close();
            for (int i = 0; i < counts.length; i++) {
                counts[i] = loop.counts(i);
            }
            return ledger.takeFailedAfterClose();
        });
        if (!clock.await(closing, TimeUnit.SECONDS.toNanos(30))) {
            throw new TimeoutException("the sending thread did not close the step's ledger within 30 s");
        }
        long failedAfterClose = closing.get();
        SentIntervals intervals = null;
        if (intervalWriters != null) {
            FailedRanges[] failures = ledger.current();
            SentIntervals[] perFlow = new SentIntervals[counts.length];
            for (int i = 0; i < perFlow.length; i++) {
                FlowSendCounts c = counts[i];
                perFlow[i] = intervalWriters[i].finish(c.sent() + failures[i].total(), failures[i], stepRates[i],
                    stepWindowNs, loop.offsetNs(i), c.scheduled(), loop.pattern(), loop.windowKey(i));
            }
            intervals = SentIntervals.sum(perFlow);
        }
        return new Outcome(counts, loop.windowNs(), loop.lag(), endpoint.endStep(), failedAfterClose, intervals,
            load());
    }

    @Override
    public long[] replyProgress() {
        if (replies == null) {
            return null;
        }
        long[] out = new long[replies.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = replies[i].progress();
        }
        return out;
    }

    @Override
    public FlowReceiver.Summary[] closeReplies(int step, long[] wireEnd) throws Exception {
        if (replies == null) {
            return null;
        }
        FlowReceiver.Summary[] out = new FlowReceiver.Summary[replies.length];
        endpoint.onReplyThread(() -> {
            for (int i = 0; i < replies.length; i++) {
                out[i] = replies[i].closeStep(wireEnd[i]);
            }
        });
        return out;
    }

    @Override
    public void close() throws Exception {
        abort(); // a step ended by a failure stops sending before its transport closes
        endpoint.close();
    }

    /**
     * The failure ledger of the open step, fed by the transport on its sending thread. A failure of a step that
     * is not open (it surfaced after the step closed) is counted, not charged to another step.
     */
    static final class Ledger implements SendFailureListener {
        private final int flows;
        private volatile FailedRanges[] current;
        private volatile int step = -1;
        private volatile boolean open;
        private long failedAfterClose;

        Ledger(int flows) {
            this.flows = flows;
            this.current = FailedRanges.perFlow(flows);
        }

        /** {@code fresh}, one per flow, becomes the ledger of {@code step}; before any of its messages is written. */
        FailedRanges[] open(int step, FailedRanges[] fresh) {
            if (fresh.length != flows) {
                throw new IllegalArgumentException("a ledger per flow: " + flows + ", not " + fresh.length);
            }
            current = fresh;
            this.step = step;
            open = true;
            return current;
        }

        FailedRanges[] current() {
            return current;
        }

        /** On the sending thread. */
        void close() {
            open = false;
        }

        /** On the sending thread. */
        long takeFailedAfterClose() {
            long n = failedAfterClose;
            failedAfterClose = 0;
            return n;
        }

        @Override
        public void failed(int flow, int failedStep, long firstSequence, int count) {
            if (open && failedStep == step && flow >= 0 && flow < flows) {
                current[flow].add(firstSequence, count);
            } else {
                failedAfterClose += count;
            }
        }
    }
}
