package io.lossprobe.core.engine;

import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.counters.ProcFiles;
import io.lossprobe.core.pacing.NanoClock;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.result.SearchResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.wire.MessageAuth;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * Runs a plan in one process: for each transport, receivers and senders on the same host, every level as a step
 * (warm-up, measured window, drain up to Tmax, accounting), results built from the sender's and receiver's counts
 * and the host's counter deltas. Transport-neutral: transports only move bytes.
 */
public final class RunEngine {
    static final long DRAIN_GRACE_MS = 20;

    private final Plan plan;
    private final Map<String, Transport> transports;
    private final Map<String, String> options;
    private final RunListener listener;
    private final StepHooks hooks;
    private final List<ReceiveSideFactory> receiveSides;
    /** Every receive side is sent every flow (multicast): each has a result of its own, and may be lost; else null. */
    private final LostReceivers replicated;
    private final SendSideFactory sendSides;
    private final int runId;
    private final RunRecord record;
    private volatile boolean stopRequested;
    private NanoClock clock = NanoClock.SYSTEM;
    private Supplier<HostCounters.Sample> hostCounters = HostCounters::sample;
    /** The run's message key: random in one process, derived from the control session between hosts. */
    private MessageAuth auth;
    /** {@code --packets}: where every kept step's per-message record goes, else null. */
    private PacketCapture packets;

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
        this(plan, transports, options, listener, hooks, List.of(receiveSides), false, sendSides, runId);
    }

    /**
     * A multicast run (docs/multicast.md): the senders from {@code sendSides} send every flow to a group, and each of
     * {@code receivers} (one receive side each, which must share the run's data key) is sent every flow; every step
     * has a result per receiver.
     */
    public static RunEngine multicast(Plan plan, Map<String, Transport> transports, Map<String, String> options,
                                      RunListener listener, List<ReceiveSideFactory> receivers,
                                      SendSideFactory sendSides, int runId) {
        if (receivers.isEmpty()) {
            throw new IllegalArgumentException("a multicast run needs receivers");
        }
        return new RunEngine(plan, transports, options, listener, StepHooks.NONE, receivers, true, sendSides, runId);
    }

    private RunEngine(Plan plan, Map<String, Transport> transports, Map<String, String> options, RunListener listener,
                      StepHooks hooks, List<ReceiveSideFactory> receiveSides, boolean replicated,
                      SendSideFactory sendSides, int runId) {
        this.receiveSides = List.copyOf(receiveSides);
        this.replicated = replicated ? new LostReceivers(listener) : null;
        this.sendSides = sendSides;
        this.runId = runId;
        this.plan = plan;
        this.transports = transports;
        this.options = Map.copyOf(options);
        this.listener = listener;
        this.hooks = hooks;
        this.record = new RunRecord(plan, transports);
        MessageAuth remote = this.receiveSides.get(0).dataKey(runId);
        this.auth = remote != null ? remote : sendSides.dataKey(runId);
        if (this.auth == null) {
            this.auth = MessageAuth.random();
        }
    }

    /** The plan this engine runs. */
    public Plan plan() {
        return plan;
    }

    /** Tags and checks every data message with {@code auth} (between hosts, the key both ends derive). */
    public RunEngine withAuth(MessageAuth auth) {
        this.auth = auth;
        return this;
    }

    /** Records every kept step message by message into {@code capture} (receivers in this process only). */
    public RunEngine withPackets(PacketCapture capture) {
        this.packets = capture;
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

    /** The step being measured, in words, while one is (for a failed run's error); null between steps. */
    private volatile String runningStep;

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
            RunResult failed = snapshot(RunStatus.FAILED, failure(runningStep, e));
            listener.resultsUpdated(failed);
            throw e;
        }
        RunResult result = snapshot(stopRequested ? RunStatus.INTERRUPTED : RunStatus.COMPLETE, null);
        listener.resultsUpdated(result);
        return result;
    }

    /**
     * A failed run's {@code error}: the step that was running when it failed (the steps before it are complete in the
     * result; this one is not there), then what failed: lossprobe's own messages as they are, anything else with its
     * exception's simple name ({@code SocketException: Connection reset}).
     */
    static String failure(String runningStep, Exception e) {
        String what = e.getMessage() == null ? e.getClass().getName()
            : e.getClass().getName().startsWith("io.lossprobe.") ? e.getMessage()
            : e.getClass().getSimpleName() + ": " + e.getMessage();
        return runningStep == null ? what : runningStep + " failed: " + what;
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
        if (packets != null) {
            packets.passStarted();
        }
        // Each pass tags under a key of its own (the header names neither transport nor size), as the server does.
        MessageAuth passKey = auth.forPass(transport.name(), pass.messageSize());
        try (StepSides sides = StepSides.open(receiveSides, replicated, sendSides, transport, pass, runId, passKey,
            options)) {
            for (ReceiveSide receiver : sides.receivers()) {
                record.environment(transport.name(), receiver.environment());
            }
            for (SendSide sender : sides.senders()) {
                record.environment(transport.name(), sender.environment());
            }
            Steps steps = new Steps(new StepRun.Pass(transport, pass, options, listener, hooks, clock, hostCounters,
                sides.egress(), sides.senderEnvironment(), this::stopRequested, sides, packets));
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
        if (packets != null) {
            // Written once the pass's receivers closed: nothing adds to the steps' records any more.
            packets.passEnded(record.frozenFrom(passStart));
        }
        return step;
    }

    private synchronized void searchFinished(List<SearchResult> found) {
        record.addSearches(found);
        listener.resultsUpdated(snapshot(RunStatus.RUNNING, null));
    }

    /** Measures steps of one pass: a level's, a search trial's (not kept as a step) or a search's latency step. */
    final class Steps {
        private final StepRun.Pass pass;

        Steps(StepRun.Pass pass) {
            this.pass = pass;
        }

        /**
         * Measures step {@code step}; a kept step becomes part of the result (and is printed), a trial is only
         * returned. Null when the run was stopped during it.
         */
        StepResult measure(int step, Level level, StepTiming timing, boolean keep) throws Exception {
            runningStep = pass.transport().name() + " step " + step + " at " + level + (level.isMax() ? "" : "/s")
                + " (" + pass.plan().messageSize() + " B)";
            StepResult result = new StepRun(pass, step, level, timing).run(keep);
            runningStep = null;
            if (result != null && keep) {
                synchronized (RunEngine.this) {
                    record.add(new CompletedStep(result, pass.sides().receivers()));
                }
                listener.stepFinished(result);
                listener.resultsUpdated(snapshot(RunStatus.RUNNING, null));
            }
            return result;
        }

        boolean stopped() {
            return stopRequested;
        }
    }

    /** The run as it stands: completed steps, each with the late arrivals counted since it closed. */
    public synchronized RunResult snapshot(RunStatus status, String error) {
        return record.snapshot(status, error);
    }
}
