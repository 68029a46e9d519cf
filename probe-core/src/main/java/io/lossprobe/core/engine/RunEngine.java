package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.accounting.SequenceTracker;
import io.lossprobe.core.counters.EgressQdisc;
import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.counters.ProcFiles;
import io.lossprobe.core.pacing.NanoClock;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.SearchResult;
import io.lossprobe.core.result.SignedHistogram;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.wire.MessageAuth;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Runs a plan in one process: for each transport, receivers and senders on the same host, every level as a step
 * (warm-up, measured window, drain up to Tmax, accounting), results built from the sender's and receiver's counts
 * and the host's counter deltas. Transport-neutral: transports only move bytes.
 */
public final class RunEngine {
    private static final long TICK_NS = TimeUnit.MILLISECONDS.toNanos(50);
    static final long DRAIN_GRACE_MS = 20;

    private final Plan plan;
    private final Map<String, Transport> transports;
    private final Map<String, String> options;
    private final RunListener listener;
    private final StepHooks hooks;
    private final ReceiveSideFactory receiveSides;
    private final SendSideFactory sendSides;
    private final int runId;
    private final RunRecord record;
    private volatile boolean stopRequested;
    private NanoClock clock = NanoClock.SYSTEM;
    private Supplier<HostCounters.Sample> hostCounters = HostCounters::sample;
    /** The run's message key: random in one process, derived from the control session between hosts. */
    private MessageAuth auth;
    /** The current transport's senders' egress queue, when they run on this host. */
    private EgressQdisc egress = EgressQdisc.NONE;
    private Map<String, Long> senderEnvironment = Map.of();

    public RunEngine(Plan plan, Map<String, Transport> transports, Map<String, String> options, RunListener listener,
                     StepHooks hooks) {
        this(plan, transports, options, listener, hooks, ReceiveSideFactory.LOCAL, plan.bindAddress(),
            ThreadLocalRandom.current().nextInt());
    }

    /**
     * Senders here, receivers from {@code receiveSides} (e.g. a server behind the control channel).
     *
     * @param targetHost the address the senders send to
     */
    public RunEngine(Plan plan, Map<String, Transport> transports, Map<String, String> options, RunListener listener,
                     StepHooks hooks, ReceiveSideFactory receiveSides, String targetHost, int runId) {
        this(plan, transports, options, listener, hooks, receiveSides, SendSideFactory.local(targetHost), runId);
    }

    /** Receivers and senders each here or remote: the general form behind the others. */
    public RunEngine(Plan plan, Map<String, Transport> transports, Map<String, String> options, RunListener listener,
                     StepHooks hooks, ReceiveSideFactory receiveSides, SendSideFactory sendSides, int runId) {
        this.receiveSides = receiveSides;
        this.sendSides = sendSides;
        this.runId = runId;
        this.plan = plan;
        this.transports = transports;
        this.options = Map.copyOf(options);
        this.listener = listener;
        this.hooks = hooks;
        this.record = new RunRecord(plan, transports);
        MessageAuth remote = receiveSides.dataKey(runId);
        this.auth = remote != null ? remote : sendSides.dataKey(runId);
        if (this.auth == null) {
            this.auth = MessageAuth.random();
        }
    }

    /** Tags and checks every data message with {@code auth} (between hosts, the key both ends derive). */
    public RunEngine withAuth(MessageAuth auth) {
        this.auth = auth;
        return this;
    }

    /** Runs on {@code clock} (a virtual clock in tests; its senders must pace on it too). */
    public RunEngine withClock(NanoClock clock) {
        this.clock = clock;
        return this;
    }

    /** Samples this host's counters with {@code sampler} (a test's scripted counters) instead of /proc. */
    public RunEngine withHostCounters(Supplier<HostCounters.Sample> sampler) {
        this.hostCounters = sampler;
        return this;
    }

    /** Asks the run to stop after the current phase; the steps completed so far stay in the result. */
    public void requestStop() {
        stopRequested = true;
    }

    public boolean stopRequested() {
        return stopRequested;
    }

    /** Runs every transport through every level and returns the complete result. */
    public RunResult run() throws Exception {
        prewarm();
        try {
            for (String name : plan.transports()) {
                if (stopRequested) {
                    break;
                }
                Transport transport = transports.get(name);
                if (transport == null) {
                    throw new IllegalArgumentException("unknown transport '" + name + "'");
                }
                runTransport(transport);
            }
        } catch (Exception e) {
            RunResult failed = snapshot("failed", e.toString());
            listener.resultsUpdated(failed);
            throw e;
        }
        RunResult result = snapshot(stopRequested ? "interrupted" : "complete", null);
        listener.resultsUpdated(result);
        return result;
    }

    /**
     * Pays once, before any step, for what initialises lazily in the counter readers (the OS MXBean, the /proc
     * parsers' classes): measured here, the first {@link HostCounters#sample()} took about 94 ms, later ones 2.5 ms.
     */
    public static void prewarm() {
        HostCounters.sample();
        ProcFiles.readUdpDrops();
    }

    private void runTransport(Transport transport) throws Exception {
        int step = 0;
        for (int size : plan.sizes()) {
            if (stopRequested) {
                break;
            }
            step = runPass(transport, plan.forSize(size), step);
        }
    }

    /**
     * One message size's pass of a transport: its receivers and senders opened for that size, the levels, then the
     * rate search. Returns the next step's number: steps are numbered on through the passes of a transport.
     */
    private int runPass(Transport transport, Plan pass, int firstStep) throws Exception {
        int step = firstStep;
        int passStart = record.steps();
        // Each pass tags under a key of its own (the header names neither transport nor size), as the server does.
        MessageAuth passKey = auth.forPass(transport.name(), pass.messageSize());
        try (ReceiveSide receiver = receiveSides.open(transport, pass, runId, passKey, options);
             SendSide sender = sendSides.open(transport, pass, runId, passKey, options)) {
            record.environment(transport.name(), receiver.environment());
            record.environment(transport.name(), sender.environment());
            egress = sender instanceof LocalSendSide local ? EgressQdisc.forTarget(local.targetHost())
                : EgressQdisc.NONE;
            senderEnvironment = sender.environment();
            Steps steps = new Steps(transport, pass, receiver, sender);
            for (Level level : pass.levels()) {
                if (stopRequested || steps.measure(step, level, StepTiming.of(pass), true) == null) {
                    break; // stopped mid-step: a partial step is not a result
                }
                step++;
            }
            if (pass.search() != null && !stopRequested) {
                step = RateSearches.run(pass, transport.name(), step, steps, listener, this::searchFinished,
                    clock);
            }
            record.freezeFrom(passStart);
        }
        return step;
    }

    private synchronized void searchFinished(List<SearchResult> found) {
        record.addSearches(found);
        listener.resultsUpdated(snapshot("running", null));
    }

    /** Measures steps of one pass: a level's, a search trial's (not kept as a step) or a search's latency step. */
    final class Steps {
        private final Transport transport;
        private final Plan pass;
        private final ReceiveSide receiver;
        private final SendSide sender;

        Steps(Transport transport, Plan pass, ReceiveSide receiver, SendSide sender) {
            this.transport = transport;
            this.pass = pass;
            this.receiver = receiver;
            this.sender = sender;
        }

        /**
         * Measures step {@code step}; a kept step becomes part of the result (and is printed), a trial is only
         * returned. Null when the run was stopped during it.
         */
        StepResult measure(int step, Level level, StepTiming timing, boolean keep) throws Exception {
            StepResult result = runStep(transport, pass, receiver, sender, step, level, timing, keep);
            if (result != null && keep) {
                synchronized (RunEngine.this) {
                    record.add(new CompletedStep(result, receiver));
                }
                listener.stepFinished(result);
                listener.resultsUpdated(snapshot("running", null));
            }
            return result;
        }

        boolean stopped() {
            return stopRequested;
        }
    }

    /** @param keep a step of the result (a search trial is not: its histograms are not logged) */
    private StepResult runStep(Transport transport, Plan plan, ReceiveSide receiver, SendSide sender, int step,
                               Level level, StepTiming timing, boolean keep) throws Exception {
        String name = transport.name();
        int flows = plan.ports();
        listener.stepStarted(name, step, level);
        long[] rates = new long[flows];
        int[] windowBits = SequenceTracker.windowsFor(plan, level);
        for (int i = 0; i < rates.length; i++) {
            rates[i] = level.isMax() ? 0 : plan.flowRate(level, i);
        }
        if (plan.echo() && receiver.localEndpoint() != null) {
            receiver.replyFilter(hooks.replyFilter(name, step));
        }
        long startEpochMs = System.currentTimeMillis();
        // Between hosts: the other clock's offset, so every delay is a one-way delay with a stated uncertainty.
        Clocks clocks = Clocks.estimate(receiver, sender);
        if (timing.isPlans(plan)) {
            sender.beginStep(step, rates, windowBits, hooks.sendFilter(name, step));
        } else {
            sender.beginStep(step, rates, windowBits, hooks.sendFilter(name, step), timing.warmupNs(),
                timing.windowNs());
        }
        FailedRanges[] failures = sender.failures();
        long beginNs = clock.nanoTime();
        receiver.beginStep(step, level, timing.windowNs(), windowBits, failures, clocks.receiverMinusSenderNs());
        long beginTookNs = clock.nanoTime() - beginNs;

        // The window's counters are sampled here, on the engine's thread, never on the sending thread: before the
        // first message when there is no warm-up (exact), else as the window begins (the skew is measured).
        long warmupNs = plan.concurrency() > 0 ? 0 : timing.warmupNs();
        boolean noWarmup = warmupNs == 0;
        WindowSample windowSample = noWarmup
            ? WindowSample.take(receiver, sender, egress, clock, hostCounters, Long.MIN_VALUE, null) : null;
        // With a warm-up, this host's loss counters before the first message: if none has moved by the window's
        // sample, however late it comes, the window's loss deltas are exact. Both sides must be here to know.
        WindowSample.Start stepStart = noWarmup || receiver.localEndpoint() == null
            || !(sender instanceof LocalSendSide) ? null : WindowSample.Start.take(hostCounters, egress);
        long t0 = clock.nanoTime();
        long windowStart;
        int intervals = plan.intervals(timing.windowNs());
        if (intervals > 0) {
            // The receivers learn where the window begins before anything is sent: local ones at once, remote ones
            // over the control channel, so the start waits for twice what beginning the step took there.
            long at = t0 + (receiver.localEndpoint() != null ? 0 : 2 * beginTookNs + 1_000_000);
            receiver.countIntervals(at + warmupNs, plan.intervalNs(), intervals);
            windowStart = sender.start(at);
        } else {
            windowStart = sender.start();
        }
        long windowStartEpochMs = System.currentTimeMillis() + (windowStart - clock.nanoTime()) / 1_000_000;
        boolean done = false;
        while (!done && !stopRequested) {
            long now = clock.nanoTime();
            if (windowSample == null && now >= windowStart) {
                windowSample = WindowSample.take(receiver, sender, egress, clock, hostCounters, windowStart,
                    stepStart);
                now = clock.nanoTime();
            }
            if (now < windowStart) {
                listener.progress(name, step, RunListener.Phase.WARMUP, now - t0, warmupNs, 0, 0);
            } else {
                if (receiver.localEndpoint() != null) {
                    hooks.duringWindow(name, step, receiver.localEndpoint(), now - windowStart);
                }
                long received = sum(receiver.progress()); // read before sent, so it never shows more than sent
                listener.progress(name, step, RunListener.Phase.WINDOW, now - windowStart, timing.windowNs(),
                    sender.sentProgress(), received);
            }
            long wait = windowSample == null ? Math.max(1, windowStart - now) : TICK_NS;
            done = sender.awaitDone(Math.min(TICK_NS, wait));
        }
        if (stopRequested) {
            sender.abort();
            sender.awaitDone(TimeUnit.SECONDS.toNanos(5));
            return null;
        }
        if (windowSample == null) {
            // sending ended before the window
            windowSample = WindowSample.take(receiver, sender, egress, clock, hostCounters, windowStart, stepStart);
        }
        drain(name, step, receiver, sender, timing.drainNs());
        if (stopRequested) {
            return null; // a step cut short in its drain would count stragglers as lost
        }
        SendSide.Outcome outcome = sender.finish();
        long[] wireEnd = outcome.wireEnds(failures);
        ReceiveSide.Receipt receipt = receiver.closeStep(step, wireEnd);
        FlowReceiver.Summary[] replies = sender.closeReplies(step, wireEnd);
        HostCounters.Sample after = hostCounters.get();
        long egressAfter = egress.drops();
        long egressBefore = windowSample.egressDrops();
        long egressDrops = egressBefore < 0 || egressAfter < egressBefore ? -1 : egressAfter - egressBefore;
        clocks = clocks.reestimated(receiver, sender);
        SignedHistogram delay = FlowAccounting.merged(receipt.flows());
        SignedHistogram rtt = replies == null ? null : FlowAccounting.merged(replies);
        StepResult result = new StepBuilder(transport, options, egress, senderEnvironment).build(plan, step, level,
            outcome, receipt, replies, delay, rtt, windowSample, after, clocks, egressDrops, failures);
        long end = System.currentTimeMillis();
        if (!keep) {
            return result;
        }
        if (receipt.intervals() != null) {
            listener.stepIntervalHistograms(name, step, "delay", receipt.intervals().delay(), delay,
                windowStartEpochMs, plan.intervalNs(), outcome.windowNs());
        }
        listener.stepHistogram(name, step, "delay", delay, startEpochMs, end);
        if (rtt != null) {
            listener.stepHistogram(name, step, "rtt", rtt, startEpochMs, end);
        }
        return result;
    }

    /**
     * Waits until every flow received all it was sent, or Tmax passes (or a stop is requested). Once everything
     * is in, it still waits a short grace ({@value #DRAIN_GRACE_MS} ms, within Tmax) so duplicates trailing their
     * originals are counted as duplicates, not as late.
     */
    private void drain(String name, int step, ReceiveSide receiver, SendSide sender, long drainNs)
        throws Exception {
        long start = clock.nanoTime();
        long deadline = start + drainNs;
        while (!stopRequested) {
            long now = clock.nanoTime();
            long[] progress = receiver.progress();
            long[] sent = sender.sent(); // a failure surfacing now takes its messages out of what must arrive
            long sentTotal = sum(sent);
            long[] replies = sender.replyProgress(); // echo mode: each request's reply must be back too
            boolean all = true;
            for (int i = 0; i < progress.length && all; i++) {
                all = progress[i] >= sent[i] && (replies == null || replies[i] >= progress[i]);
            }
            if (all) {
                deadline = Math.min(deadline, now + TimeUnit.MILLISECONDS.toNanos(DRAIN_GRACE_MS));
                if (now >= deadline) {
                    return;
                }
            } else if (now >= deadline) {
                return;
            }
            listener.progress(name, step, RunListener.Phase.DRAIN, now - start, drainNs, sentTotal,
                sum(progress));
            // Polling the receivers' counters: the engine's own wait, bounded by Tmax.
            clock.parkNanos(Math.min(deadline - now, 2_000_000));
        }
    }

    private static long sum(long[] values) {
        long total = 0;
        for (long v : values) {
            total += v;
        }
        return total;
    }

    /** The run as it stands: completed steps, each with the late arrivals counted since it closed. */
    public synchronized RunResult snapshot(String status, String error) {
        return record.snapshot(status, error);
    }
}
