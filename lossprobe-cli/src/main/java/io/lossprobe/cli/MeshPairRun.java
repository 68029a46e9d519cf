package io.lossprobe.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.analysis.MeshResult;
import io.lossprobe.analysis.MeshResult.Host;
import io.lossprobe.control.Auth;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transport;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs the mesh's pairs whose source is this host, one {@link RunEngine} against the target's serve each, and keeps
 * the engines that run so a Ctrl-C can stop them.
 *
 * @param planFor  the plan of a pair, from its target's address
 * @param flows    keep each pair's per-flow results
 * @param slotEnds stops a pair that runs past its slot
 * @param running  the engines running now
 * @param drive    {@code mesh --drive}: each pair's source serve sends to its target serve ({@link FromRun}), this
 *                 host only drives them
 */
record MeshPairRun(MeshClock clock, java.util.function.Function<String, Plan> planFor, Map<String, Host> byName,
                   Auth auth,
                   Map<String, String> options, Map<String, Transport> available, int connectTimeoutMs,
                   PrintWriter out, boolean quiet, boolean flows, ScheduledExecutorService slotEnds,
                   Set<RunEngine> running, boolean drive) implements MeshRunner.PairRun {
    /**
     * Runs one pair from this host to its target: connect, the plan, goodbye. Its failure is its result. A pair
     * still running at its slot's {@code stopAt} (the slot's end less the slack) is asked to stop after its current
     * phase, so it does not run on into the next round, where its hosts may be in other pairs.
     */
    @Override
    public MeshResult.Pair run(MeshResult.Planned p, MeshRunner.Slot slot) {
        Host target = byName.get(p.target());
        Instant began = clock.wallNow();
        long beganNs = clock.nanoTime();
        Long lateMs = slot == null ? null : Math.max(0, Duration.between(slot.start(), clock.now()).toMillis());
        String label = p.source() + " -> " + p.target();
        PairListener listener = new PairListener(label, out, quiet);
        RunResult result = null;
        String status;
        String error = null;
        java.util.concurrent.atomic.AtomicBoolean overran = new java.util.concurrent.atomic.AtomicBoolean();
        try {
            Plan plan = planFor.apply(target.address());
            HostPort to = new HostPort(target.address(), target.port());
            Host source = byName.get(p.source());
            try (AutoCloseable session = drive
                ? FromRun.open(new HostPort(source.address(), source.port()), to, auth, plan, options, available,
                    listener, connectTimeoutMs)
                : RemoteRun.open(to, auth, plan, options, available, false, listener, connectTimeoutMs)) {
                RunEngine engine = session instanceof FromRun f ? f.engine() : ((RemoteRun) session).engine();
                running.add(engine);
                java.util.concurrent.ScheduledFuture<?> watchdog = slot == null ? null : slotEnds.schedule(() -> {
                    overran.set(true);
                    engine.requestStop();
                }, Math.max(0, Duration.between(clock.now(), slot.stopAt()).toMillis()), TimeUnit.MILLISECONDS);
                try {
                    result = engine.run();
                } finally {
                    running.remove(engine);
                    if (watchdog != null) {
                        watchdog.cancel(false);
                    }
                }
            }
            status = result.status() == RunStatus.COMPLETE ? MeshResult.COMPLETE : MeshResult.INTERRUPTED;
            if (overran.get() && !MeshResult.COMPLETE.equals(status)) {
                error = "stopped at its slot's end (" + slot.stopAt() + "): the pair needs a longer --slot";
            }
        } catch (Exception e) {
            result = listener.latest;
            status = MeshResult.FAILED;
            error = LossprobeCommand.describe(e);
            synchronized (out) {
                out.printf("%-24s FAILED: %s%n", label, error);
                out.flush();
            }
        }
        long durationMs = TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - beganNs);
        return new MeshResult.Pair(p.source(), p.target(), p.round(), status, error, began.toString(), durationMs,
            lateMs, slot == null ? null : slot.clockStepMs(), slot == null ? null : slot.note(),
            result == null || flows ? result : withoutFlows(result));
    }

    /** The result with each step's per-flow list emptied: a mesh keeps the steps' totals. */
    static RunResult withoutFlows(RunResult r) {
        ObjectNode tree = ResultFiles.mapper().valueToTree(r);
        for (var step : tree.withArray("steps")) {
            ((ObjectNode) step).set("flows", ResultFiles.mapper().createArrayNode());
        }
        try {
            return ResultFiles.mapper().treeToValue(tree, RunResult.class);
        } catch (IOException e) {
            throw new IllegalStateException("a result reads back as it was written", e);
        }
    }

    /** Prints a pair's rows as its steps finish and keeps its latest partial result (for a pair that fails). */
    private static final class PairListener implements RunListener {
        private final String label;
        private final PrintWriter out;
        private final boolean quiet;
        volatile RunResult latest;

        PairListener(String label, PrintWriter out, boolean quiet) {
            this.label = label;
            this.out = out;
            this.quiet = quiet;
        }

        @Override
        public void stepFinished(StepResult result) {
            if (quiet) {
                return;
            }
            synchronized (out) {
                out.printf("%-24s %s%n", label, StepTable.row(result));
                out.flush();
            }
        }

        @Override
        public void resultsUpdated(RunResult partial) {
            latest = partial;
        }
    }
}
