package io.lossprobe.core.testing;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.counters.ThreadTimes;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SendFailureListener;
import io.lossprobe.core.transport.SendPacing;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageHeader;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A {@link Transport} in memory, on {@link VirtualTime}, for deterministic tests of the engine's boundaries: each
 * flow's writer hands what it flushed to the same flow's {@link FlowReceiver} on the one virtual thread, a fixed
 * {@link #delayNs per-message delay} after the flush, unless a scripted fault says otherwise.
 *
 * <p>Faults are scripted per data message, by (step, flow, wire sequence): {@link #drop}, {@link #duplicate},
 * {@link #deliverLate} (possibly after the step closed), {@link #refuse} ({@link MessageWriter#REFUSED}, which
 * takes no wire sequence, so the refusal applies to the next attempts at that sequence), {@link #failAfterAccept}
 * (accepted, then reported through the {@link SendFailureListener} when the writer flushes, like UDP's failed GSO
 * batch, or later), {@link #block} ({@link MessageWriter#BLOCKED} for a while). Two faults simulate transport bugs,
 * for tests of the checks that must catch them: {@link #reportFailedButDeliver} and {@link #deliverUnsent}.
 * Warm-up messages are never faulted (the SPI reports no failure of theirs).
 *
 * <p>Everything it does is recorded for the test: every write ({@link #writes()}), every message handed to a
 * receiver ({@link #arrivals()}), and when and where each endpoint sampled its window-start counters
 * ({@link #windowSamples()}).
 *
 * <p>One sender and one receiver at a time, both on the same {@link VirtualTime}; nothing here is thread-safe,
 * nor needs to be: the engine, the send loop and the deliveries all run on the test's thread.
 */
public final class MemoryTransport implements Transport {
    public static final String NAME = "memory";
    /**
     * No spin: a real spin waits for the next due message by burning time, which virtual time cannot do (time moves
     * only when the thread waits), so a cycle that is not behind always waits for its due time on a timer.
     */
    public static final SendPacing PACING = new SendPacing(0, 0, 50_000, SendPacing.BATCH_LIMIT);

    private final VirtualTime time;
    private final Map<Key, Fault> faults = new HashMap<>();
    private final List<Write> writes = new ArrayList<>();
    private final List<Arrival> arrivals = new ArrayList<>();
    private final List<WindowSample> windowSamples = new ArrayList<>();
    private long delayNs;
    private long writeCostNs;
    private SendPacing pacing = PACING;
    private Receiver receiver;
    /** {@link #replicas}: every receiver opened, each handed every message (multicast); else only {@link #receiver}. */
    private final List<Receiver> replicas = new ArrayList<>();
    private boolean replicated;
    /** Per replica: the (step, flow, sequence) keys it never gets. */
    private final Map<Integer, java.util.Set<Key>> replicaDrops = new HashMap<>();
    /** The run's key, from the sender's spec (both halves share one process and one run). */
    private io.lossprobe.core.wire.MessageAuth runKey;
    private Sender sender;
    /** Cumulative counts, for the endpoints' window deltas and the samples. */
    private long dataAccepted;
    private long dataRefused;
    private long dataFailed;
    private long blockedAttempts;
    private long dataDelivered;
    private long undeliverable;
    /** The sending thread's scheduler model: virtual time spent in writes (on a CPU), and starved stretches. */
    private long writingNs;
    private final List<long[]> starved = new ArrayList<>();

    public MemoryTransport(VirtualTime time) {
        this.time = time;
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Every message arrives {@code ns} after the flush that sent it (default 0). */
    public MemoryTransport delayNs(long ns) {
        this.delayNs = requireNonNegative(ns);
        return this;
    }

    /** Each write call takes {@code ns} of virtual time (default 0); needed for a level of max rate. */
    public MemoryTransport writeCostNs(long ns) {
        this.writeCostNs = requireNonNegative(ns);
        return this;
    }

    /**
     * From virtual time {@code atNs} the sending thread is kept off the CPU for {@code forNs} (another thread runs on
     * it): nothing else of the virtual thread runs meanwhile, and {@link #threadTimes()} counts the stretch as time
     * on a run queue.
     */
    public MemoryTransport starve(long atNs, long forNs) {
        starved.add(new long[] {atNs, requireNonNegative(forNs)});
        time.at(atNs, () -> time.spend(forNs));
        return this;
    }

    /**
     * The sending thread's scheduler times on virtual time: on a CPU while it writes ({@link #writeCostNs}), on a
     * run queue while {@link #starve starved}, asleep otherwise.
     */
    public ThreadTimes threadTimes() {
        return () -> {
            long now = time.nanoTime();
            long waited = 0;
            for (long[] s : starved) {
                waited += Math.max(0, Math.min(now, s[0] + s[1]) - s[0]);
            }
            return new ThreadTimes.Sample(writingNs, waited);
        };
    }

    /** The pacing the sender asks for (default {@link #PACING}). */
    public MemoryTransport pacing(SendPacing pacing) {
        this.pacing = pacing;
        return this;
    }

    /** Data message {@code seq} of {@code flow} in {@code step} is accepted and vanishes on the way. */
    /** Several receivers may be open at once, each handed every message (a multicast group's receivers). */
    public MemoryTransport replicas() {
        replicated = true;
        return this;
    }

    /** With {@link #replicas}: the {@code replica}-th receiver opened (from 0) never gets this data message. */
    public MemoryTransport dropAt(int replica, int step, int flow, long seq) {
        replicaDrops.computeIfAbsent(replica, r -> new java.util.HashSet<>()).add(new Key(step, flow, seq));
        return this;
    }

    public MemoryTransport drop(int step, int flow, long seq) {
        fault(step, flow, seq).drop = true;
        return this;
    }

    /** It arrives {@code extraNs} later than the others (after its step closed, if that is long enough). */
    public MemoryTransport deliverLate(int step, int flow, long seq, long extraNs) {
        fault(step, flow, seq).extraDelayNs = requireNonNegative(extraNs);
        return this;
    }

    /** It arrives, and a copy of it arrives {@code copyDelayNs} after the flush (plus the base delay). */
    public MemoryTransport duplicate(int step, int flow, long seq, long copyDelayNs) {
        fault(step, flow, seq).copyDelayNs = requireNonNegative(copyDelayNs);
        return this;
    }

    /**
     * The next {@code times} attempts to write the message that would carry {@code seq} are refused (a refusal
     * takes no wire sequence, so the attempt after it carries {@code seq} again).
     */
    public MemoryTransport refuse(int step, int flow, long seq, int times) {
        fault(step, flow, seq).refusals = times;
        return this;
    }

    /** Messages {@code [first, first + count)} are accepted, never leave, and are reported failed at the flush. */
    public MemoryTransport failAfterAccept(int step, int flow, long first, int count) {
        return failAfterAccept(step, flow, first, count, 0);
    }

    /** As {@link #failAfterAccept(int, int, long, int)}, the failure surfacing {@code surfaceAfterNs} after it. */
    public MemoryTransport failAfterAccept(int step, int flow, long first, int count, long surfaceAfterNs) {
        for (long s = first; s < first + count; s++) {
            Fault f = fault(step, flow, s);
            f.fail = true;
            f.failSurfaceNs = requireNonNegative(surfaceAfterNs);
        }
        return this;
    }

    /** A transport bug: message {@code seq} is reported failed at the flush, yet it is delivered. */
    public MemoryTransport reportFailedButDeliver(int step, int flow, long seq) {
        Fault f = fault(step, flow, seq);
        f.fail = true;
        f.failButDeliver = true;
        return this;
    }

    /** A transport bug: with message {@code afterSeq}, a message numbered {@code unsentSeq} arrives too. */
    public MemoryTransport deliverUnsent(int step, int flow, long afterSeq, long unsentSeq) {
        fault(step, flow, afterSeq).unsentSeq = unsentSeq;
        return this;
    }

    /** From the first attempt to write {@code seq}, the writer is {@link MessageWriter#BLOCKED} for {@code forNs}. */
    public MemoryTransport block(int step, int flow, long seq, long forNs) {
        fault(step, flow, seq).blockForNs = requireNonNegative(forNs);
        return this;
    }

    /** Every write call that was not blocked, in order. */
    public List<Write> writes() {
        return Collections.unmodifiableList(writes);
    }

    /** Every message handed to a receiver (warm-up, data, duplicates, strays), in order. */
    public List<Arrival> arrivals() {
        return Collections.unmodifiableList(arrivals);
    }

    /** Every window-start counter sample of either endpoint, in order. */
    public List<WindowSample> windowSamples() {
        return Collections.unmodifiableList(windowSamples);
    }

    /** Write calls answered {@link MessageWriter#BLOCKED}. */
    public long blockedAttempts() {
        return blockedAttempts;
    }

    /** Messages that arrived when no receiver was open (after the run ended, say). */
    public long undeliverable() {
        return undeliverable;
    }

    @Override
    public ReceiverEndpoint openReceiver(ReceiverSpec spec) {
        if (replicated) {
            Receiver r = new Receiver(spec, replicas.size());
            replicas.add(r);
            receiver = replicas.get(0);
            return r;
        }
        if (receiver != null && !receiver.closed) {
            throw new IllegalStateException("one memory receiver at a time");
        }
        receiver = new Receiver(spec, 0);
        return receiver;
    }

    @Override
    public SenderEndpoint openSender(SenderSpec spec) {
        if (sender != null && !sender.closed) {
            throw new IllegalStateException("one memory sender at a time");
        }
        sender = new Sender(spec);
        runKey = spec.auth();
        return sender;
    }

    private Fault fault(int step, int flow, long seq) {
        return faults.computeIfAbsent(new Key(step, flow, seq), k -> new Fault());
    }

    private static long requireNonNegative(long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("negative time: " + ns);
        }
        return ns;
    }

    private void sample(String side, int step) {
        windowSamples.add(new WindowSample(side, step, Thread.currentThread(), time.nanoTime(), time.inTask(),
            sender == null ? 0 : sender.stepDataAccepted(), receiver == null ? 0 : receiver.stepDataDelivered()));
    }

    /** A message handed to the receiving end, now. */
    private void deliver(int flow, long word0, long word1, long seq, long sendTimeNs) {
        if (replicated) {
            boolean any = false;
            for (Receiver r : replicas) {
                any |= !r.closed;
                java.util.Set<Key> drops = replicaDrops.getOrDefault(r.index, java.util.Set.of());
                if (!r.closed && !drops.contains(new Key(MessageHeader.step(word1), flow, seq))) {
                    r.accept(flow, word0, word1, seq, sendTimeNs);
                }
            }
            undeliverable += any ? 0 : 1;
            return;
        }
        Receiver r = receiver;
        if (r == null || r.closed) {
            undeliverable++;
            return;
        }
        if (r.paused) {
            r.held.add(new long[] {flow, word0, word1, seq, sendTimeNs});
            return;
        }
        r.accept(flow, word0, word1, seq, sendTimeNs);
    }

    private void deliverAt(long atNs, int flow, long word0, long word1, long seq, long sendTimeNs) {
        time.at(atNs, () -> deliver(flow, word0, word1, seq, sendTimeNs));
    }

    /** What a write call did. */
    public record Write(int step, int flow, int kind, long sequence, long intendedNs, long atNs, int outcome) {
        public boolean data() {
            return kind == MessageHeader.KIND_DATA;
        }

        public boolean accepted() {
            return outcome == MessageWriter.ACCEPTED;
        }
    }

    /**
     * A message handed to a receiver.
     *
     * @param counted what {@link FlowReceiver#onMessage} returned: a first arrival of the open step
     */
    public record Arrival(int step, int flow, int kind, long sequence, long atNs, boolean counted) {
        public boolean data() {
            return kind == MessageHeader.KIND_DATA;
        }
    }

    /**
     * An endpoint's {@code beginWindow}: where and when it ran.
     *
     * @param side                "sender" or "receiver"
     * @param inSendTask          it ran inside a task of the send executor (a send cycle)
     * @param dataAcceptedBefore  data messages of the step the sender had accepted by then
     * @param dataDeliveredBefore data messages of the step delivered by then
     */
    public record WindowSample(String side, int step, Thread thread, long atNs, boolean inSendTask,
                               long dataAcceptedBefore, long dataDeliveredBefore) {
    }

    private record Key(int step, int flow, long seq) {
    }

    private static final class Fault {
        boolean drop;
        long extraDelayNs;
        long copyDelayNs = -1;
        int refusals;
        boolean fail;
        long failSurfaceNs;
        boolean failButDeliver;
        long unsentSeq = -1;
        long blockForNs;
        long blockedUntilNs = -1;
    }

    private final class Sender implements SenderEndpoint {
        private final SenderSpec spec;
        private final Writer[] writers;
        private boolean closed;
        private int step = -1;
        private long stepBase;
        private long[] windowBase;

        Sender(SenderSpec spec) {
            this.spec = spec;
            this.writers = new Writer[spec.plan().ports()];
            for (int i = 0; i < writers.length; i++) {
                writers[i] = new Writer(i, spec.failures());
            }
        }

        long stepDataAccepted() {
            return dataAccepted - stepBase;
        }

        @Override
        public MessageWriter writer(int flow) {
            return writers[flow];
        }

        @Override
        public ScheduledExecutorService sendExecutor() {
            return time.executor();
        }

        @Override
        public SendPacing pacing() {
            return pacing;
        }

        /** The reply accounting runs on the one virtual thread, like everything else: inline. */
        @Override
        public void onReplyThread(Runnable action) {
            action.run();
        }

        @Override
        public void beginStep(int step) {
            this.step = step;
            stepBase = dataAccepted;
            windowBase = counts();
        }

        @Override
        public void beginWindow() {
            sample("sender", step);
            windowBase = counts();
        }

        private long[] counts() {
            return new long[] {dataAccepted, dataRefused, dataFailed, blockedAttempts};
        }

        @Override
        public TransportReport endStep() {
            long[] now = counts();
            long[] base = windowBase == null ? new long[now.length] : windowBase;
            return new TransportReport(Map.of("memory.accepted", now[0] - base[0], "memory.refused",
                now[1] - base[1], "memory.failed", now[2] - base[2], "memory.blocked", now[3] - base[3]), Map.of());
        }

        /** Echo mode: a reply arrives back at this flow's reply accounting. */
        void reply(int flow, long word0, long word1, long seq, long sendTimeNs) {
            FlowReceiver[] replies = spec.replies();
            if (!closed && replies != null) {
                replies[flow].onMessage(word0, word1, seq, sendTimeNs, sendTimeNs,
                    spec.auth().tag(word0, word1, seq, sendTimeNs, sendTimeNs), spec.plan().messageSize(),
                    time.nanoTime());
            }
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    /** One flow's writer: collects what is written, hands it on at the flush. */
    private final class Writer implements MessageWriter {
        private final int flow;
        private final SendFailureListener failures;
        private long[] pending = new long[4 * 64];
        private int n;

        Writer(int flow, SendFailureListener failures) {
            this.flow = flow;
            this.failures = failures;
        }

        @Override
        public int write(long word0, long word1, long sequence, long sendTimeNs, long actualNs, long tag) {
            if (sender.closed) {
                throw new IllegalStateException("write on a closed memory sender");
            }
            time.spend(writeCostNs);
            writingNs += writeCostNs;
            int step = MessageHeader.step(word1);
            int kind = MessageHeader.kind(word0);
            boolean data = kind == MessageHeader.KIND_DATA;
            Fault f = data ? faults.get(new Key(step, flow, sequence)) : null;
            long now = time.nanoTime();
            if (f != null && f.blockForNs > 0) {
                if (f.blockedUntilNs < 0) {
                    f.blockedUntilNs = now + f.blockForNs;
                }
                if (now < f.blockedUntilNs) {
                    blockedAttempts++;
                    return BLOCKED;
                }
            }
            if (f != null && f.refusals > 0) {
                f.refusals--;
                dataRefused++;
                writes.add(new Write(step, flow, kind, sequence, sendTimeNs, now, REFUSED));
                return REFUSED;
            }
            if (4 * n == pending.length) {
                pending = Arrays.copyOf(pending, pending.length * 2);
            }
            pending[4 * n] = word0;
            pending[4 * n + 1] = word1;
            pending[4 * n + 2] = sequence;
            pending[4 * n + 3] = sendTimeNs;
            n++;
            if (data) {
                dataAccepted++;
            }
            writes.add(new Write(step, flow, kind, sequence, sendTimeNs, now, ACCEPTED));
            return ACCEPTED;
        }

        /**
         * What was written leaves now: the normal messages as one delivery after the base delay, faulted ones on
         * their own; consecutive failed sequences are reported as one range, as a failed batch would be.
         */
        @Override
        public void flush() {
            if (n == 0) {
                return;
            }
            long now = time.nanoTime();
            long[] normal = new long[4 * n];
            int normalCount = 0;
            long runFirst = -1;
            int runCount = 0;
            int runStep = -1;
            long runSurfaceNs = 0;
            for (int i = 0; i < n; i++) {
                long w0 = pending[4 * i];
                long w1 = pending[4 * i + 1];
                long seq = pending[4 * i + 2];
                long sendTime = pending[4 * i + 3];
                int step = MessageHeader.step(w1);
                Fault f = MessageHeader.kind(w0) == MessageHeader.KIND_DATA ? faults.get(new Key(step, flow, seq))
                    : null;
                if (f == null) {
                    System.arraycopy(pending, 4 * i, normal, 4 * normalCount++, 4);
                    continue;
                }
                if (f.fail) {
                    dataFailed++;
                    boolean continuesRun = runCount > 0 && seq == runFirst + runCount && step == runStep
                        && f.failSurfaceNs == runSurfaceNs;
                    if (continuesRun) {
                        runCount++;
                    } else {
                        reportFailure(runStep, runFirst, runCount, runSurfaceNs, now);
                        runFirst = seq;
                        runCount = 1;
                        runStep = step;
                        runSurfaceNs = f.failSurfaceNs;
                    }
                    if (!f.failButDeliver) {
                        continue;
                    }
                }
                if (f.unsentSeq >= 0) {
                    deliverAt(now + delayNs, flow, w0, w1, f.unsentSeq, sendTime);
                }
                if (f.drop) {
                    continue;
                }
                deliverAt(now + delayNs + f.extraDelayNs, flow, w0, w1, seq, sendTime);
                if (f.copyDelayNs >= 0) {
                    deliverAt(now + delayNs + f.copyDelayNs, flow, w0, w1, seq, sendTime);
                }
            }
            reportFailure(runStep, runFirst, runCount, runSurfaceNs, now);
            n = 0;
            if (normalCount > 0) {
                int count = normalCount;
                time.at(now + delayNs, () -> {
                    for (int i = 0; i < count; i++) {
                        deliver(flow, normal[4 * i], normal[4 * i + 1], normal[4 * i + 2], normal[4 * i + 3]);
                    }
                });
            }
        }

        private void reportFailure(int step, long first, int count, long surfaceNs, long now) {
            if (count == 0) {
                return;
            }
            if (surfaceNs == 0) {
                failures.failed(flow, step, first, count); // during the flush, on the sending thread
            } else {
                time.at(now + surfaceNs, () -> failures.failed(flow, step, first, count));
            }
        }
    }

    private final class Receiver implements ReceiverEndpoint {
        private final ReceiverSpec spec;
        /** Which receiver it is, in the order they opened. */
        private final int index;
        private final ArrayDeque<long[]> held = new ArrayDeque<>();
        private boolean paused;
        private boolean closed;
        private int step = -1;
        private long stepBase;
        private long windowBase;

        Receiver(ReceiverSpec spec, int index) {
            this.spec = spec;
            this.index = index;
        }

        long stepDataDelivered() {
            return dataDelivered - stepBase;
        }

        void accept(int flow, long word0, long word1, long seq, long sendTimeNs) {
            long now = time.nanoTime();
            int kind = MessageHeader.kind(word0);
            if (kind == MessageHeader.KIND_DATA) {
                dataDelivered++;
            }
            // The memory path keeps four words; a message is tagged as its sender would have tagged it, so a
            // simulated transport bug (a sequence never sent) still passes authentication, as it would.
            boolean answer = spec.flows()[flow].onMessage(word0, word1, seq, sendTimeNs, sendTimeNs,
                runKey.tag(word0, word1, seq, sendTimeNs, sendTimeNs), spec.plan().messageSize(), now);
            // A warm-up is answered (as a warm-up) but never counted.
            arrivals.add(new Arrival(MessageHeader.step(word1), flow, kind, seq, now,
                answer && kind == MessageHeader.KIND_DATA));
            if (answer && spec.plan().echo()) {
                long echo = MessageHeader.replyOf(word0);
                time.at(now + delayNs, () -> {
                    if (sender != null) {
                        sender.reply(flow, echo, word1, seq, sendTimeNs);
                    }
                });
            }
        }

        /** The receiving thread is the one virtual thread: inline, between deliveries. */
        @Override
        public void onFlowThreads(java.util.function.IntConsumer action) {
            for (int i = 0; i < spec.flows().length; i++) {
                action.accept(i);
            }
        }

        @Override
        public void setPaused(boolean paused) {
            this.paused = paused;
            while (!paused && !held.isEmpty()) {
                long[] m = held.poll();
                accept((int) m[0], m[1], m[2], m[3], m[4]);
            }
        }

        @Override
        public void beginStep(int step) {
            this.step = step;
            stepBase = dataDelivered;
            windowBase = dataDelivered;
        }

        @Override
        public void beginWindow() {
            sample("receiver", step);
            windowBase = dataDelivered;
        }

        @Override
        public TransportReport endStep() {
            return new TransportReport(Map.of("memory.delivered", dataDelivered - windowBase), Map.of());
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
