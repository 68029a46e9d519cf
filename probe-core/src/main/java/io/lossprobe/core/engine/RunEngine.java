package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.accounting.SequenceTracker;
import io.lossprobe.core.counters.EgressQdisc;
import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.counters.ProcFiles;
import io.lossprobe.core.pacing.NanoClock;
import io.lossprobe.core.pacing.SendLoop;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.Echo;
import io.lossprobe.core.result.Environment;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.LossBurst;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.SearchResult;
import io.lossprobe.core.result.SignedHistogram;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageAuth;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Runs a plan in one process: for each transport, receivers and senders on the same host, every level as a step
 * (warm-up, measured window, drain up to Tmax, accounting), results built from the sender's and receiver's counts
 * and the host's counter deltas. Transport-neutral: transports only move bytes.
 */
public final class RunEngine {
    private static final long TICK_NS = TimeUnit.MILLISECONDS.toNanos(50);
    static final long DRAIN_GRACE_MS = 20;
    /** A window-start counter sample finishing later than this after the window began is worth a warning. */
    static final long WINDOW_SKEW_WARN_NS = TimeUnit.MILLISECONDS.toNanos(20);

    private final Plan plan;
    private final Map<String, Transport> transports;
    private final Map<String, String> options;
    private final RunListener listener;
    private final StepHooks hooks;
    private final ReceiveSideFactory receiveSides;
    private final SendSideFactory sendSides;
    private final int runId;
    private final List<CompletedStep> completed = new ArrayList<>();
    private final List<SearchResult> searches = new ArrayList<>();
    private final Map<String, Long> socketBuffers = new HashMap<>();
    private final String startedAt = Instant.now().toString();
    private volatile boolean stopRequested;
    private NanoClock clock = NanoClock.SYSTEM;
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
        int passStart = completed.size();
        try (ReceiveSide receiver = receiveSides.open(transport, pass, runId, auth, options);
             SendSide sender = sendSides.open(transport, pass, runId, auth, options)) {
            receiver.environment().forEach((k, v) -> socketBuffers.put(transport.name() + "." + k, v));
            sender.environment().forEach((k, v) -> socketBuffers.put(transport.name() + "." + k, v));
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
            for (CompletedStep c : completed.subList(passStart, completed.size())) {
                c.freeze(); // the receivers close now: keep the late counts they reached
            }
        }
        return step;
    }

    private synchronized void searchFinished(List<SearchResult> found) {
        searches.addAll(found);
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
                    completed.add(new CompletedStep(result, receiver));
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
        WindowSample windowSample = noWarmup ? sampleWindowStart(receiver, sender, Long.MIN_VALUE) : null;
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
                windowSample = sampleWindowStart(receiver, sender, windowStart);
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
            windowSample = sampleWindowStart(receiver, sender, windowStart); // sending ended before the window
        }
        drain(name, step, receiver, sender, timing.drainNs());
        if (stopRequested) {
            return null; // a step cut short in its drain would count stragglers as lost
        }
        SendSide.Outcome outcome = sender.finish();
        long[] wireEnd = outcome.wireEnds(failures);
        ReceiveSide.Receipt receipt = receiver.closeStep(step, wireEnd);
        FlowReceiver.Summary[] replies = sender.closeReplies(step, wireEnd);
        HostCounters.Sample after = HostCounters.sample();
        long egressAfter = egress.drops();
        long egressBefore = windowSample.egressDrops();
        long egressDrops = egressBefore < 0 || egressAfter < egressBefore ? -1 : egressAfter - egressBefore;
        clocks = clocks.reestimated(receiver, sender);
        SignedHistogram delay = merged(receipt.flows());
        SignedHistogram rtt = replies == null ? null : merged(replies);
        StepResult result = buildStep(transport, plan, step, level, outcome, receipt, replies, delay, rtt,
            windowSample, after, clocks, egressDrops, failures);
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
     * Samples what the step's counter deltas start from: the receiving sockets' drops first (the figure most
     * sensitive to the moment), then the host's counters, then the sending transport's.
     *
     * @param windowStartNs when the window began, or {@link Long#MIN_VALUE} when sampling before the first message
     */
    private WindowSample sampleWindowStart(ReceiveSide receiver, SendSide sender, long windowStartNs)
        throws Exception {
        receiver.beginWindow();
        HostCounters.Sample host = HostCounters.sample();
        sender.beginWindow();
        long egressDrops = egress.drops(); // forks tc where the egress queue is a real qdisc: last, and only here
        long skew = windowStartNs == Long.MIN_VALUE ? 0 : Math.max(0, clock.nanoTime() - windowStartNs);
        return new WindowSample(host, egressDrops, skew);
    }

    /**
     * The host's counters at the window's start, the senders' egress queue's drops (-1 unknown), and how long
     * after the window's first message the sampling finished (0 when sampled before it): counter deltas may miss
     * that much of the window's beginning.
     */
    private record WindowSample(HostCounters.Sample host, long egressDrops, long skewNs) {
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

    private StepResult buildStep(Transport transport, Plan plan, int step, Level level, SendSide.Outcome outcome,
                                 ReceiveSide.Receipt receipt, FlowReceiver.Summary[] replies, SignedHistogram delay,
                                 SignedHistogram rtt, WindowSample windowSample, HostCounters.Sample after,
                                 Clocks clocks, long egressQdiscDrops, FailedRanges[] failures) {
        HostCounters.Sample before = windowSample.host();
        SendLoop.FlowSendCounts[] sendCounts = outcome.counts();
        TransportReport txReport = outcome.report();
        FlowReceiver.Summary[] summaries = receipt.flows();
        TransportReport rxReport = receipt.report();
        List<FlowResult> flowResults = new ArrayList<>();
        List<Echo> echoes = new ArrayList<>();
        Counts totals = Counts.ZERO;
        List<LossBurst> bursts = new ArrayList<>();
        Histogram ipdv = Latency.newHistogram();
        SignedHistogram transit = new SignedHistogram();
        double jitterSum = 0;
        int jitterFlows = 0;
        // Which timing mode and timestamp source produced each delay figure (docs/measurement.md, the floor).
        String timing = io.lossprobe.core.transport.Timing.modeOf(transport, options);
        long kernelStamped = 0;
        long repliesStamped = 0;
        Long socketDropsTotal = null;
        IdentityChecks checks = new IdentityChecks();
        DelayBaselines baselines = clocks.offset() == null ? null : new DelayBaselines();
        for (int i = 0; i < summaries.length; i++) {
            FlowReceiver.Summary s = summaries[i];
            SendLoop.FlowSendCounts c = sendCounts[i];
            Map<String, Long> perFlow = new HashMap<>(txReport.flow(i));
            perFlow.putAll(rxReport.flow(i));
            // Foreign arrivals the transport refused before accounting (another source address, an extra
            // connection) join those the accounting refused (a tag that does not verify).
            Long foreignAtTransport = perFlow.remove(TransportReport.FOREIGN);
            Counts counts = new Counts(c.scheduled(), c.sent(), c.sendFailed(), c.behind(), s.received(),
                c.sent() - s.received(), s.lostInRuns(), s.duplicates(), s.reordered(), s.late(),
                s.lateDuplicates(), s.corrupt(), s.foreign() + (foreignAtTransport == null ? 0 : foreignAtTransport),
                s.lossEvents());
            checks.check(i, counts);
            Long drops = perFlow.remove(TransportReport.SOCKET_DROPS);
            if (drops != null) {
                socketDropsTotal = (socketDropsTotal == null ? 0 : socketDropsTotal) + drops;
            }
            Echo flowEcho = null;
            if (replies != null) {
                FlowReceiver.Summary r = replies[i];
                flowEcho = echo(c.sent(), s.received(), r, outcome.windowNs(),
                    Latency.of(r.delay(), null, null).measuredBy(r.timestampSource(), timing),
                    Latency.of(r.transit(), null, null).measuredBy(r.timestampSource(), timing));
                echoes.add(flowEcho);
                repliesStamped += r.kernelStamped();
                checks.checkReplies(i, c.sent(), r.received(), r.lostInRuns());
            }
            Long baseline = baselines == null ? null : baselines.add(s);
            String source = s.timestampSource();
            flowResults.add(new FlowResult(i, plan.port(i), counts, s.lossBurst(), drops,
                Latency.of(s.delay(), clocks.basis(), clocks.uncertaintyNs()).measuredBy(source, timing),
                Latency.of(s.transit(), clocks.basis(), clocks.uncertaintyNs()).measuredBy(source, timing), baseline,
                round(s.jitterNs()), Latency.of(s.ipdv()).measuredBy(source, timing), perFlow, flowEcho));
            kernelStamped += s.kernelStamped();
            totals = totals.plus(counts);
            bursts.add(s.lossBurst());
            ipdv.add(s.ipdv());
            transit.add(s.transit());
            if (s.received() >= 2) { // RFC 3550 jitter needs two arrivals; a silent flow has none to average
                jitterSum += s.jitterNs();
                jitterFlows++;
            }
        }
        double windowSeconds = outcome.windowNs() / 1e9;
        double achievedSend = totals.sent() / windowSeconds;
        double achievedReceive = totals.received() / windowSeconds;
        long target = level.ratePerSecond();
        boolean saturated = target > 0 && achievedSend < 0.99 * target;
        Map<String, Long> hostDeltas = after.deltaSince(before);
        SenderEgress senderEgress = SenderEgress.of(egress.device(), egressQdiscDrops, hostDeltas, senderEnvironment);
        if (egressQdiscDrops > 0) {
            hostDeltas.put(egress.counterKey(), egressQdiscDrops);
        }
        Map<String, Long> transportCounters = new HashMap<>(txReport.counters());
        transportCounters.putAll(rxReport.counters());

        List<String> warnings = new ArrayList<>(txReport.notes());
        warnings.addAll(rxReport.notes());
        warnings.addAll(checks.warnings());
        if (totals.foreign() > 0) {
            warnings.add(totals.foreign() + " arrival(s) were not this run's sender's (a tag that does not verify "
                + "under the run's key, or another source address): counted as foreign, never as received; someone "
                + "else is sending to these ports");
        }
        long unrecorded = 0;
        for (FailedRanges f : failures) {
            unrecorded += f.unrecorded();
        }
        if (unrecorded > 0) {
            warnings.add(unrecorded + " message(s) reported as failed after being sent could not be recorded (out "
                + "of order, or past " + FailedRanges.MAX_RANGES + " ranges a flow): they count as sent and lost");
        }
        if (outcome.failedAfterClose() > 0) {
            warnings.add(outcome.failedAfterClose() + " message(s) of an earlier step failed to send after that "
                + "step closed; they were counted there as sent and lost");
        }
        if (windowSample.skewNs() > WINDOW_SKEW_WARN_NS) {
            warnings.add(String.format(java.util.Locale.ROOT, "counters were sampled %.1f ms after the window "
                + "began; their deltas miss the window's first moments", windowSample.skewNs() / 1e6));
        }
        warnings.addAll(clocks.warnings(delay, baselines));
        List<io.lossprobe.core.result.IntervalResult> intervals = null;
        if (outcome.intervals() != null && receipt.intervals() != null) {
            IntervalResults cut = IntervalResults.of(outcome.intervals(), receipt.intervals(), plan.intervalNs(),
                outcome.windowNs(), clocks.basis(), clocks.uncertaintyNs());
            intervals = cut.intervals();
            warnings.addAll(cut.warnings(totals));
        }
        Map<String, Long> attribution = attribute(totals, socketDropsTotal,
            receipt.hostCounters() != null ? receipt.hostCounters() : hostDeltas, senderEgress.silentDrops());
        String egressWarning = senderEgress.warning(attribution.get("senderEgress"));
        if (egressWarning != null) {
            warnings.add(egressWarning);
        }
        if (transport.reliable(options) && (totals.lost() > 0 || totals.duplicates() > 0 || totals.reordered() > 0)) {
            warnings.add(transport.name() + " promises delivery, yet lost=" + totals.lost() + " duplicates="
                + totals.duplicates() + " reordered=" + totals.reordered()
                + ": a defect of the path or of lossprobe");
        }
        String source = io.lossprobe.core.transport.Timing.sourceOf(kernelStamped, delay.count());
        return new StepResult(transport.name(), step, level, target, outcome.windowNs(), windowSample.skewNs(),
            totals,
            round(totals.lossPercent()), LossBurst.merge(bursts), round(achievedSend), round(achievedReceive), saturated,
            Latency.of(delay, clocks.basis(), clocks.uncertaintyNs()).measuredBy(source, timing),
            Latency.of(transit, clocks.basis(), clocks.uncertaintyNs()).measuredBy(source, timing),
            baselines == null ? null
                : Latency.of(baselines.excess(), Latency.OVER_BASELINE, null).measuredBy(source, timing),
            baselines == null ? null : baselines.description(), clocks.offset(), clocks.driftNs(),
            outcome.lag().measuredBy(null, timing),
            round(jitterSum / Math.max(1, jitterFlows)), Latency.of(ipdv).measuredBy(source, timing), after.cpuSince(before), socketDropsTotal, hostDeltas, receipt.hostCounters(),
            receipt.cpu(), transportCounters, attribution, warnings, replies == null ? null : sumEchoes(echoes, outcome.windowNs(),
                Latency.of(rtt, null, null).measuredBy(io.lossprobe.core.transport.Timing.sourceOf(repliesStamped,
                    rtt.count()), timing), Latency.of(mergedTransit(replies), null, null).measuredBy(
                    io.lossprobe.core.transport.Timing.sourceOf(repliesStamped, rtt.count()), timing)),
            flowResults, plan.messageSize(), intervals);
    }

    /** One step-wide delay histogram from the flows' own. */
    private static SignedHistogram merged(FlowReceiver.Summary[] flows) {
        SignedHistogram h = new SignedHistogram();
        for (FlowReceiver.Summary s : flows) {
            h.add(s.delay());
        }
        return h;
    }

    /** The flows' transits (echo: the replies' round trips from the actual send time) as one histogram. */
    private static SignedHistogram mergedTransit(FlowReceiver.Summary[] flows) {
        SignedHistogram h = new SignedHistogram();
        for (FlowReceiver.Summary s : flows) {
            h.add(s.transit());
        }
        return h;
    }

    private static Echo echo(long sent, long requestsReceived, FlowReceiver.Summary replies, long windowNs,
                             Latency rtt, Latency rttTransit) {
        long repliesReceived = replies.received();
        return new Echo(sent, requestsReceived, sent - requestsReceived, repliesReceived,
            requestsReceived - repliesReceived, sent - repliesReceived, replies.duplicates(), replies.reordered(),
            replies.late(), round(repliesReceived / (windowNs / 1e9)), rtt, rttTransit);
    }

    private static Echo sumEchoes(List<Echo> flows, long windowNs, Latency rtt, Latency rttTransit) {
        long sent = 0;
        long requestsReceived = 0;
        long repliesReceived = 0;
        long dup = 0;
        long reordered = 0;
        long late = 0;
        for (Echo e : flows) {
            sent += e.requestsSent();
            requestsReceived += e.requestsReceived();
            repliesReceived += e.repliesReceived();
            dup += e.duplicateReplies();
            reordered += e.reorderedReplies();
            late += e.lateReplies();
        }
        return new Echo(sent, requestsReceived, sent - requestsReceived, repliesReceived,
            requestsReceived - repliesReceived, sent - repliesReceived, dup, reordered, late,
            round(repliesReceived / (windowNs / 1e9)), rtt, rttTransit);
    }

    /**
     * Splits the lost messages by where the counters say they went: the receiving sockets' own drop counts
     * first, then the receiving host's NIC drops, then the packets the sending host dropped at its own egress
     * without any send failing ({@link SenderEgress#silentDrops}), and what remains is the path (or unknown).
     * Egress drops the senders were told of are not here: those messages are in sendFailed ({@code sendRefused}).
     *
     * @param hostDeltas         the receiving host's counter deltas
     * @param senderEgressSilent packets the sending host's egress dropped that no send failed for
     */
    static Map<String, Long> attribute(Counts totals, Long socketDrops, Map<String, Long> hostDeltas,
                                       long senderEgressSilent) {
        Map<String, Long> out = new LinkedHashMap<>();
        long remaining = totals.lost();
        out.put("lost", remaining);
        long socket = Math.min(remaining, socketDrops == null ? 0 : socketDrops);
        out.put("receiverSocket", socket);
        remaining -= socket;
        long nic = 0;
        for (Map.Entry<String, Long> e : hostDeltas.entrySet()) {
            if (e.getKey().startsWith("dev.") && e.getKey().endsWith(".rxDrops")) {
                nic += e.getValue();
            }
        }
        long nicShare = Math.min(remaining, nic);
        out.put("nic", nicShare);
        remaining -= nicShare;
        long egressShare = Math.min(remaining, senderEgressSilent);
        out.put("senderEgress", egressShare);
        remaining -= egressShare;
        out.put("pathOrUnknown", remaining);
        out.put("sendRefused", totals.sendFailed());
        return out;
    }

    private static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }

    /** The run as it stands: completed steps, each with the late arrivals counted since it closed. */
    public synchronized RunResult snapshot(String status, String error) {
        List<StepResult> steps = new ArrayList<>();
        for (CompletedStep c : completed) {
            steps.add(c.withLateSoFar());
        }
        Environment env = EnvironmentProbe.describe(socketBuffers);
        return new RunResult(RunResult.SCHEMA_VERSION, "lossprobe", startedAt, Instant.now().toString(), status,
            error, env, plan, declaredCounters(), steps, searches);
    }

    private Map<String, List<io.lossprobe.core.transport.CounterDescriptor>> declaredCounters() {
        Map<String, List<io.lossprobe.core.transport.CounterDescriptor>> declared = new java.util.LinkedHashMap<>();
        for (String name : plan.transports()) {
            Transport t = transports.get(name);
            if (t != null && !t.counters().isEmpty()) {
                declared.put(name, t.counters());
            }
        }
        return declared;
    }

    /** A finished step and the receivers that keep counting its late arrivals until they close. */
    private static final class CompletedStep {
        private final StepResult result;
        private ReceiveSide receiver;
        private ReceiveSide.Late lateAfterClose;

        CompletedStep(StepResult result, ReceiveSide receiver) {
            this.result = result;
            this.receiver = receiver;
            int flows = result.flows().size();
            this.lateAfterClose = new ReceiveSide.Late(new long[flows], new long[flows]);
        }

        void freeze() {
            refresh();
            receiver = null;
        }

        private void refresh() {
            if (receiver != null) {
                try {
                    lateAfterClose = receiver.lateAfterClose(result.step());
                } catch (Exception e) {
                    // Keep the last counts we had; the result stays valid without the newest stragglers.
                }
            }
        }

        StepResult withLateSoFar() {
            refresh();
            long[] late = new long[result.flows().size()];
            long[] duplicates = new long[late.length];
            for (int i = 0; i < late.length; i++) {
                Counts c = result.flows().get(i).counts();
                late[i] = c.late() + lateAfterClose.first()[i];
                duplicates[i] = c.lateDuplicates() + lateAfterClose.duplicates()[i];
            }
            return result.withLate(late, duplicates);
        }
    }
}
