package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.counters.EgressQdisc;
import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.pacing.NanoClock;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.SignedHistogram;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.Transport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * One step from its beginning to its result, in four phases on the engine's thread: {@link #begin} (every side of
 * the pass's {@link StepSides} learns the step's {@link StepStart}), {@link #window} (the counters the step's deltas
 * start from, the senders' start, the warm-up and window until sending ends), {@link #drain} (up to Tmax for
 * stragglers) and {@link #close} (the sides' counts and the host's counters become the {@link StepResult}).
 */
final class StepRun {
    private static final long TICK_NS = TimeUnit.MILLISECONDS.toNanos(50);

    /**
     * What every step of a pass shares: the engine's listener, hooks, clock and counters, and the pass's sides.
     *
     * @param egress            the senders' egress queue, when they run on this host
     * @param senderEnvironment the senders' socket settings, for the step's egress figures
     * @param stopped           whether the run was asked to stop
     * @param packets           {@code --packets}: where kept steps' per-message records go, else null
     */
    record Pass(Transport transport, Plan plan, Map<String, String> options, RunListener listener, StepHooks hooks,
                NanoClock clock, Supplier<HostCounters.Sample> hostCounters, EgressQdisc egress,
                Map<String, Long> senderEnvironment, BooleanSupplier stopped, StepSides sides,
                PacketCapture packets) {
    }

    private final Pass pass;
    private final Plan plan;
    private final NanoClock clock;
    private final RunListener listener;
    private final String name;
    private final int step;
    private final Level level;
    private final StepTiming timing;
    private final StepSides sides;
    private long startEpochMs;
    private Clocks clocks;
    private StepStart start;
    /** How long beginning the step took the receivers (over the control channel when they are remote). */
    private long beginTookNs;
    private WindowSample windowSample;
    private long windowStart;
    private long windowStartEpochMs;
    /** The step's per-message records at the receivers ({@code --packets} on a kept step), else null. */
    private io.lossprobe.core.accounting.PacketSlots[] packetSlots;

    StepRun(Pass pass, int step, Level level, StepTiming timing) {
        this.pass = pass;
        this.plan = pass.plan();
        this.clock = pass.clock();
        this.listener = pass.listener();
        this.name = pass.transport().name();
        this.step = step;
        this.level = level;
        this.timing = timing;
        this.sides = pass.sides();
    }

    /**
     * Runs the step; null when the run was stopped during it (a partial step is not a result).
     *
     * @param keep a step of the result (a search trial is not: its histograms are not logged)
     */
    StepResult run(boolean keep) throws Exception {
        begin(keep);
        if (!window()) {
            return null;
        }
        drain();
        if (stopped()) {
            return null; // a step cut short in its drain would count stragglers as lost
        }
        return close(keep);
    }

    private boolean stopped() {
        return pass.stopped().getAsBoolean();
    }

    /**
     * Every side learns the step: the senders first, whose failure ledger the receivers then skip. A kept step is
     * recorded message by message with {@code --packets}.
     */
    private void begin(boolean keep) throws Exception {
        listener.stepStarted(name, step, level);
        if (plan.echo() && !sides.localEndpoints().isEmpty()) {
            sides.replyFilter(pass.hooks().replyFilter(name, step));
        }
        startEpochMs = System.currentTimeMillis();
        // Between hosts: the other clock's offset, so every delay is a one-way delay with a stated uncertainty.
        clocks = Clocks.estimate(sides);
        start = StepStart.of(plan, step, level, timing, pass.hooks().sendFilter(name, step),
            clocks.receiverMinusSenderNs());
        PacketCapture packets = keep && sides.receiversLocal() ? pass.packets() : null;
        int capacity = packets == null ? 0 : packets.capacity(plan.ports());
        for (SendSide s : sides.senders()) {
            s.capturePackets(packets == null ? 1 : packets.every(), capacity);
        }
        sides.beginSenders(start);
        long beginNs = clock.nanoTime();
        sides.beginReceivers(start);
        beginTookNs = clock.nanoTime() - beginNs;
        packetSlots = packets == null ? null
            : StepSides.single(sides.receivers(), "receiver").capturePackets(packets.every(), capacity);
    }

    /**
     * Starts the senders and follows the warm-up and the window until sending ends, sampling the window's counters
     * as it begins. False when the run was stopped meanwhile (the senders are then stopped too).
     */
    private boolean window() throws Exception {
        pass.hooks().beforeStart(name, step);
        // The window's counters are sampled here, on the engine's thread, never on the sending thread: before the
        // first message when there is no warm-up (exact), else as the window begins (the skew is measured).
        long warmupNs = plan.concurrency() > 0 ? 0 : timing.warmupNs();
        boolean noWarmup = warmupNs == 0;
        windowSample = noWarmup ? WindowSample.take(sides, pass.egress(), clock, pass.hostCounters(),
            Long.MIN_VALUE, null) : null;
        // With a warm-up, this host's loss counters before the first message: if none has moved by the window's
        // sample, however late it comes, the window's loss deltas are exact. Both sides must be here to know.
        WindowSample.Start firstMessage = noWarmup || !sides.allLocal() ? null
            : WindowSample.Start.take(pass.hostCounters(), pass.egress());
        long t0 = clock.nanoTime();
        startSenders(t0, warmupNs);
        windowStartEpochMs = System.currentTimeMillis() + (windowStart - clock.nanoTime()) / 1_000_000;
        boolean done = false;
        while (!done && !stopped()) {
            long now = clock.nanoTime();
            if (windowSample == null && now >= windowStart) {
                windowSample = sampleWindow(firstMessage);
                now = clock.nanoTime();
            }
            progress(now, t0, warmupNs);
            long wait = windowSample == null ? Math.max(1, windowStart - now) : TICK_NS;
            done = sides.awaitDone(Math.min(TICK_NS, wait));
        }
        if (stopped()) {
            sides.abort();
            sides.awaitDone(TimeUnit.SECONDS.toNanos(5));
            return false;
        }
        if (windowSample == null) {
            windowSample = sampleWindow(firstMessage); // sending ended before the window
        }
        return true;
    }

    private WindowSample sampleWindow(WindowSample.Start firstMessage) throws Exception {
        return WindowSample.take(sides, pass.egress(), clock, pass.hostCounters(), windowStart, firstMessage);
    }

    /** The senders start at {@code t0}; with intervals the receivers learn first where the window begins. */
    private void startSenders(long t0, long warmupNs) throws Exception {
        int intervals = plan.intervals(timing.windowNs());
        if (intervals > 0) {
            // The receivers learn where the window begins before anything is sent: local ones at once, remote ones
            // over the control channel, so the start waits for twice what beginning the step took there.
            long at = t0 + (sides.receiversLocal() ? 0 : 2 * beginTookNs + 1_000_000);
            sides.countIntervals(at + warmupNs, plan.intervalNs(), intervals);
            windowStart = sides.start(at);
        } else {
            windowStart = sides.start();
        }
    }

    /** Tells the listener how far the warm-up or the window is; in the window, runs the test hook first. */
    private void progress(long now, long t0, long warmupNs) throws Exception {
        if (now < windowStart) {
            if (!sides.receiversLocal()) {
                // Remote receivers are polled in the warm-up too: a server gone then is found within the control
                // channel's silence bound, not only once the window begins (and the server hears from us).
                sides.progress();
            }
            listener.progress(name, step, RunListener.Phase.WARMUP, now - t0, warmupNs, 0, 0);
            return;
        }
        for (ReceiverEndpoint endpoint : sides.localEndpoints()) {
            pass.hooks().duringWindow(name, step, endpoint, now - windowStart);
        }
        long received = sum(sides.progress()); // read before sent, so it never shows more than sent
        listener.progress(name, step, RunListener.Phase.WINDOW, now - windowStart, timing.windowNs(),
            sides.sentProgress(), received);
    }

    /**
     * Waits until every flow received all it was sent, or Tmax passes (or a stop is requested). Once everything
     * is in, it still waits a short grace ({@value RunEngine#DRAIN_GRACE_MS} ms, within Tmax) so duplicates trailing
     * their originals are counted as duplicates, not as late.
     */
    private void drain() throws Exception {
        long drainNs = timing.drainNs();
        long begin = clock.nanoTime();
        long deadline = begin + drainNs;
        while (!stopped()) {
            long now = clock.nanoTime();
            long[] progress = sides.progress();
            long[] sent = sides.sent(); // a failure surfacing now takes its messages out of what must arrive
            long sentTotal = sum(sent);
            long[] replies = sides.replyProgress(); // echo mode: each request's reply must be back too
            boolean all = true;
            for (int i = 0; i < progress.length && all; i++) {
                all = progress[i] >= sent[i] && (replies == null || replies[i] >= progress[i]);
            }
            if (all) {
                deadline = Math.min(deadline, now + TimeUnit.MILLISECONDS.toNanos(RunEngine.DRAIN_GRACE_MS));
                if (now >= deadline) {
                    return;
                }
            } else if (now >= deadline) {
                return;
            }
            listener.progress(name, step, RunListener.Phase.DRAIN, now - begin, drainNs, sentTotal,
                sum(progress));
            // Polling the receivers' counters: the engine's own wait, bounded by Tmax.
            clock.parkNanos(Math.min(deadline - now, 2_000_000));
        }
    }

    /**
     * Closes every side's step and builds the result from their counts and the host's counters' deltas: every
     * sender's outcome first, then every receiver's receipt at the flows' wire ends over all senders.
     */
    private StepResult close(boolean keep) throws Exception {
        List<SendSide.Outcome> outcomes = sides.finish();
        FailedRanges[] failures = start.failures();
        long[] wireEnd = StepSides.wireEnds(outcomes, failures);
        List<ReceiveSide.Receipt> receipts = sides.closeStep(step, wireEnd);
        List<FlowReceiver.Summary[]> replies = sides.closeReplies(step, wireEnd);
        HostCounters.Sample after = pass.hostCounters().get();
        long egressAfter = pass.egress().drops();
        long egressBefore = windowSample.egressDrops();
        long egressDrops = egressBefore < 0 || egressAfter < egressBefore ? -1 : egressAfter - egressBefore;
        clocks = clocks.reestimated(sides);
        SendSide.Outcome outcome = StepSides.single(outcomes, "sender's outcome");
        if (sides.replicated()) {
            return closeReplicated(keep, outcome, receipts, after, egressDrops, failures);
        }
        ReceiveSide.Receipt receipt = StepSides.single(receipts, "receiver's receipt");
        FlowReceiver.Summary[] echoed = replies == null ? null : StepSides.single(replies, "sender's replies");
        SignedHistogram delay = FlowAccounting.merged(receipt.flows());
        SignedHistogram rtt = echoed == null ? null : FlowAccounting.merged(echoed);
        StepResult result = builder().build(plan, step, level, outcome, receipt, echoed, delay, rtt, windowSample,
            after, clocks, egressDrops, failures);
        if (keep) {
            logHistograms(receipt, outcome, delay, rtt, System.currentTimeMillis());
        }
        if (packetSlots != null) {
            SendSide sender = StepSides.single(sides.senders(), "sender");
            pass.packets().kept(new PacketCapture.Pending(step, windowStart, wireEnd, failures, packetSlots,
                sender.sentTimes()));
        }
        return result;
    }

    private StepBuilder builder() {
        return new StepBuilder(pass.transport(), pass.options(), pass.egress(), pass.senderEnvironment());
    }

    /**
     * A multicast step: one result per receiver, each built from the one sender's outcome and that receiver's
     * receipt exactly as a unicast step is, then composed ({@link ReceiverSteps}); a kept step logs the worst
     * receiver's delays.
     */
    private StepResult closeReplicated(boolean keep, SendSide.Outcome outcome, List<ReceiveSide.Receipt> receipts,
                                       HostCounters.Sample after, long egressDrops, FailedRanges[] failures) {
        List<StepResult> each = new java.util.ArrayList<>();
        List<SignedHistogram> delays = new java.util.ArrayList<>();
        List<FlowReceiver.Summary[]> flows = new java.util.ArrayList<>();
        for (ReceiveSide.Receipt receipt : receipts) {
            flows.add(receipt.flows());
            SignedHistogram delay = FlowAccounting.merged(receipt.flows());
            delays.add(delay);
            each.add(builder().build(plan, step, level, outcome, receipt, null, delay, null, windowSample, after,
                clocks, egressDrops, failures));
        }
        List<String> gone = sides.gone();
        List<String> names = sides.receiverNames();
        for (int i = 0; i < each.size(); i++) {
            if (gone.get(i) != null) {
                List<String> warnings = new java.util.ArrayList<>(each.get(i).warnings());
                warnings.add(goneWarning(names.get(i), gone.get(i)));
                each.set(i, each.get(i).withWarnings(warnings));
            }
        }
        int worst = ReceiverSteps.worst(each);
        if (keep) {
            logHistograms(receipts.get(worst), outcome, delays.get(worst), null, System.currentTimeMillis());
        }
        StepResult step = ReceiverSteps.compose(names, each, flows, clocks.offset() != null);
        if (!gone.stream().allMatch(java.util.Objects::isNull)) {
            // Every gone receiver named in the step's own warnings, and marked in its entry.
            List<String> warnings = new java.util.ArrayList<>(step.warnings());
            List<io.lossprobe.core.result.ReceiverResult> marked = new java.util.ArrayList<>();
            for (int i = 0; i < gone.size(); i++) {
                io.lossprobe.core.result.ReceiverResult r = step.receivers().get(i);
                marked.add(gone.get(i) == null ? r : r.withGone(gone.get(i)));
                String w = gone.get(i) == null ? null : goneWarning(names.get(i), gone.get(i));
                if (w != null && !warnings.contains(w)) {
                    warnings.add(w);
                }
            }
            step = step.withWarnings(warnings).withReceivers(marked, step.worstReceiver());
        }
        return step;
    }

    /** A gone receiver's warning, the same in its own entry and the step's. */
    static String goneWarning(String receiver, String why) {
        return "receiver " + receiver + " is gone (" + why + "): everything sent counts as lost to it";
    }

    /** A kept step's histograms, for {@code --hlog}: the delay's (per interval too) and in echo mode the rtt's. */
    private void logHistograms(ReceiveSide.Receipt receipt, SendSide.Outcome outcome, SignedHistogram delay,
                               SignedHistogram rtt, long end) {
        if (receipt.intervals() != null) {
            listener.stepIntervalHistograms(name, step, "delay", receipt.intervals().delay(), delay,
                windowStartEpochMs, plan.intervalNs(), outcome.windowNs());
        }
        listener.stepHistogram(name, step, "delay", delay, startEpochMs, end);
        if (rtt != null) {
            listener.stepHistogram(name, step, "rtt", rtt, startEpochMs, end);
        }
    }

    private static long sum(long[] values) {
        long total = 0;
        for (long v : values) {
            total += v;
        }
        return total;
    }
}
