package io.lossprobe.cli;

import io.lossprobe.control.Auth;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transport;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * {@code run --target --bidir}: both directions on the same plan in the same windows. Two sessions with the server,
 * one forward (this host sends to the server's receivers on the plan's ports) and one reverse (the server sends to
 * this host's receivers on the next {@code ports} ports), each an ordinary run; every step of each waits for the
 * same step of the other just before its window, so the two directions' windows start together (within the
 * control round trip of the reverse start). The result is one file: every step marked with its direction, the
 * forward plan as the run's plan.
 */
final class BidirRun implements AutoCloseable {
    private final AlignedRuns aligned = new AlignedRuns();
    private final Merged merged;
    private RemoteRun forward;
    private RemoteRun reverse;

    private BidirRun(RunListener sink) {
        this.merged = new Merged(sink);
    }

    /** The reverse direction's plan: the same steps on the ports after the forward direction's, received here. */
    static Plan reversePlan(Plan forward, String receiversHere) {
        return forward.withBasePort(forward.basePort() + forward.ports()).withBindAddress(receiversHere);
    }

    /**
     * Opens both sessions and negotiates both plans.
     *
     * @param receiversHere this host's receivers' address for the reverse direction
     */
    static BidirRun open(HostPort server, Auth auth, Plan plan, String receiversHere, Map<String, String> options,
                         Map<String, Transport> transports, RunListener sink, int timeoutMs) throws IOException {
        BidirRun run = new BidirRun(sink);
        try {
            run.forward = RemoteRun.open(server, auth, plan, options, transports, false,
                run.merged.direction(StepResult.FORWARD), run.aligned.hooks(), timeoutMs);
            run.reverse = RemoteRun.open(server, auth, reversePlan(run.forward.engine().plan(), receiversHere),
                options, transports, true, run.merged.direction(StepResult.REVERSE), run.aligned.hooks(), timeoutMs);
        } catch (IOException | RuntimeException e) {
            run.close();
            throw e;
        }
        return run;
    }

    /** Runs both directions at once; the merged result, or the first direction's failure. */
    RunResult run() throws Exception {
        RunResult[] both = aligned.run(forward.engine(), reverse.engine());
        return merged.merge(both[0], both[1]);
    }

    void requestStop() {
        forward.engine().requestStop();
        reverse.engine().requestStop();
    }

    RunResult snapshot(RunStatus status, String error) {
        return merged.merge(forward.engine().snapshot(status, error), reverse.engine().snapshot(status, error));
    }

    Plan plan() {
        return forward.engine().plan();
    }

    @Override
    public void close() {
        if (forward != null) {
            forward.close();
        }
        if (reverse != null) {
            reverse.close();
        }
    }

    /**
     * The two directions' events as one run's: each step marked with its direction, the progress line the forward
     * direction's, every partial result the two directions' merged.
     */
    private static final class Merged {
        private final RunListener sink;
        private RunResult latestForward;
        private RunResult latestReverse;

        Merged(RunListener sink) {
            this.sink = sink;
        }

        RunListener direction(String direction) {
            boolean isForward = direction.equals(StepResult.FORWARD);
            return new RunListener() {
                @Override
                public void stepStarted(String transport, int step, Level level) {
                    if (isForward) {
                        synchronized (Merged.this) {
                            sink.stepStarted(transport, step, level);
                        }
                    }
                }

                @Override
                public void progress(String transport, int step, Phase phase, long elapsedNs, long totalNs,
                                     long sent, long received) {
                    if (isForward) {
                        synchronized (Merged.this) {
                            sink.progress(transport, step, phase, elapsedNs, totalNs, sent, received);
                        }
                    }
                }

                @Override
                public void stepFinished(StepResult result) {
                    synchronized (Merged.this) {
                        sink.stepFinished(result.withDirection(direction));
                    }
                }

                @Override
                public void resultsUpdated(RunResult partial) {
                    synchronized (Merged.this) {
                        if (isForward) {
                            latestForward = partial;
                        } else {
                            latestReverse = partial;
                        }
                        if (latestForward != null && latestReverse != null) {
                            sink.resultsUpdated(merge(latestForward, latestReverse));
                        }
                    }
                }
            };
        }

        /**
         * One run of both: the forward run's plan and environment, the steps of both marked and in step order
         * (forward first), the worse status, the first error.
         */
        synchronized RunResult merge(RunResult forward, RunResult reverse) {
            List<String> transports = forward.plan().transports();
            List<StepResult> steps = new ArrayList<>();
            forward.steps().forEach(s -> steps.add(s.direction() == null ? s.withDirection(StepResult.FORWARD) : s));
            reverse.steps().forEach(s -> steps.add(s.direction() == null ? s.withDirection(StepResult.REVERSE) : s));
            steps.sort(Comparator.comparingInt((StepResult s) -> transports.indexOf(s.transport()))
                .thenComparingInt(StepResult::step)
                .thenComparing(s -> s.direction().equals(StepResult.FORWARD) ? 0 : 1));
            RunStatus status = worse(forward.status(), reverse.status());
            String error = forward.error() != null ? forward.error()
                : reverse.error() != null ? "reverse: " + reverse.error() : null;
            String finished = forward.finishedAt() == null || reverse.finishedAt() == null ? null
                : forward.finishedAt().compareTo(reverse.finishedAt()) >= 0 ? forward.finishedAt()
                : reverse.finishedAt();
            return new RunResult(forward.schemaVersion(), forward.tool(), forward.startedAt(), finished, status,
                error, forward.environment(), forward.plan(), forward.counters(), steps, forward.search());
        }

        private static RunStatus worse(RunStatus a, RunStatus b) {
            for (RunStatus s : List.of(RunStatus.FAILED, RunStatus.INTERRUPTED, RunStatus.RUNNING)) {
                if (a == s || b == s) {
                    return s;
                }
            }
            return RunStatus.COMPLETE;
        }
    }
}
