package io.lossprobe.cli;

import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.plan.Units;
import io.lossprobe.core.result.ProbeResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.result.SearchResult;
import io.lossprobe.core.result.SearchTrial;
import io.lossprobe.core.result.SignedHistogram;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code run --probe echo[:RATE]}: the run's stream steps with one low-rate echo flow beside each, on the port after
 * the plan's, in the same windows ({@link AlignedRuns}): two engines, the stream's and the probe's, each with its
 * own sockets and accounting. Every stream step carries what the probe measured during it ({@link ProbeResult}):
 * the round trip under that step's load.
 */
final class ProbeRun {
    /** The probe's rate when {@code --probe echo} names none: a request a millisecond, 1,000 round trips a second. */
    static final long DEFAULT_RATE = 1_000;
    static final int PROBE_SIZE = io.lossprobe.core.wire.MessageHeader.LENGTH;

    private final AlignedRuns aligned = new AlignedRuns();
    private RunEngine stream;
    private RunEngine probe;
    /** Between hosts: the stream's session with the server and the probe's. */
    private final List<RemoteRun> sessions = new ArrayList<>();
    private final Map<String, CompletableFuture<StepResult>> probeSteps = new ConcurrentHashMap<>();
    private volatile RunResult latestProbe;
    private final long waitForProbeMs;
    private ProbeRun(Plan plan) {
        // The probe's step ends with its own drain, at most Tmax after the stream's window.
        this.waitForProbeMs = TimeUnit.NANOSECONDS.toMillis(plan.drainNs()) + 10_000;
    }

    /** The embedded run of {@code plan} with a probe at {@code rate}. */
    static ProbeRun embedded(Plan plan, long rate, Map<String, Transport> transports, Map<String, String> options,
                             RunListener sink) {
        ProbeRun run = new ProbeRun(plan);
        run.stream = new RunEngine(plan, transports, options, run.new StreamListener(sink), run.aligned.hooks());
        run.probe = new RunEngine(plan.probeOf(rate, PROBE_SIZE), transports, options, run.new ProbeListener(),
            run.aligned.hooks());
        return run;
    }

    /**
     * {@code --target}: the stream's session with the server ({@code reverse}: the server sends, this host
     * receives) and, beside it, the probe's (echo mode: the server answers), both negotiated before any traffic.
     */
    static ProbeRun remote(HostPort server, io.lossprobe.control.Auth auth, Plan plan, boolean reverse, long rate,
                           Map<String, String> options, Map<String, Transport> transports, RunListener sink,
                           int timeoutMs) throws java.io.IOException {
        ProbeRun run = new ProbeRun(plan);
        try {
            RemoteRun s = RemoteRun.open(server, auth, plan, options, transports, reverse,
                run.new StreamListener(sink), run.aligned.hooks(), timeoutMs);
            run.sessions.add(s);
            run.stream = s.engine();
            // The probe is always forward: its responder on the server, at the address the control connection reached.
            Plan probePlan = s.engine().plan().probeOf(rate, PROBE_SIZE).withBindAddress(server.host());
            RemoteRun p = RemoteRun.open(server, auth, probePlan, options, transports, false,
                run.new ProbeListener(), run.aligned.hooks(), timeoutMs);
            run.sessions.add(p);
            run.probe = p.engine();
        } catch (java.io.IOException | RuntimeException e) {
            run.close();
            throw e;
        }
        return run;
    }

    /** Says goodbye to the server (between hosts). */
    void close() {
        for (RemoteRun r : sessions) {
            r.close();
        }
    }

    /**
     * The rate of {@code --probe echo} or {@code --probe echo:RATE}.
     *
     * @throws IllegalArgumentException with one line for anything else
     */
    static long parse(String text) {
        String t = text.strip();
        if (t.equals(ProbeResult.ECHO)) {
            return DEFAULT_RATE;
        }
        if (!t.startsWith(ProbeResult.ECHO + ":")) {
            throw new IllegalArgumentException("--probe '" + text + "' is not echo or echo:RATE (echo:1k)");
        }
        return Units.parseDecimal(t.substring(ProbeResult.ECHO.length() + 1), "--probe's rate");
    }

    /** {@code --packets}: the stream's steps recorded message by message (the probe's are not). */
    ProbeRun withPackets(io.lossprobe.core.engine.PacketCapture capture) {
        stream.withPackets(capture);
        return this;
    }

    RunResult run() throws Exception {
        RunResult[] both = aligned.run(stream, probe);
        latestProbe = both[1];
        return withProbes(both[0], both[1]);
    }

    void requestStop() {
        stream.requestStop();
        probe.requestStop();
    }

    RunResult snapshot(RunStatus status, String error) {
        return withProbes(stream.snapshot(status, error), probe.snapshot(status, error));
    }

    /**
     * The stream's result with each step's probe, where the probe's same step finished (the probe's steps as they
     * finished, not its snapshot, which may lag them), and the probe's error if it failed.
     */
    private RunResult withProbes(RunResult streamResult, RunResult probeResult) {
        List<StepResult> steps = new ArrayList<>();
        for (StepResult s : streamResult.steps()) {
            CompletableFuture<StepResult> p = probeSteps.get(key(s.transport(), s.step()));
            StepResult finished = p == null ? null : p.getNow(null);
            steps.add(finished == null ? s : s.withProbe(probeOf(finished)));
        }
        String error = streamResult.error() != null ? streamResult.error()
            : probeResult != null && probeResult.error() != null ? "probe: " + probeResult.error() : null;
        return new RunResult(streamResult.schemaVersion(), streamResult.tool(), streamResult.startedAt(),
            streamResult.finishedAt(), streamResult.status(), error, streamResult.environment(),
            streamResult.plan(), streamResult.counters(), steps, streamResult.search());
    }

    private ProbeResult probeOf(StepResult p) {
        return new ProbeResult(ProbeResult.ECHO, p.targetRate(), probe.plan().basePort(), PROBE_SIZE, p.echo(),
            p.counts().behind());
    }

    private static String key(String transport, int step) {
        return transport + "/" + step;
    }

    private CompletableFuture<StepResult> probeStep(String transport, int step) {
        return probeSteps.computeIfAbsent(key(transport, step), k -> new CompletableFuture<>());
    }

    /** The probe's events: its steps as they finish, its partial results; nothing printed. */
    private final class ProbeListener implements RunListener {
        @Override
        public void stepFinished(StepResult result) {
            probeStep(result.transport(), result.step()).complete(result);
        }

        @Override
        public void resultsUpdated(RunResult partial) {
            latestProbe = partial;
        }
    }

    /** The stream's events, passed on with each finished step's probe attached. */
    private final class StreamListener implements RunListener {
        private final RunListener sink;

        StreamListener(RunListener sink) {
            this.sink = sink;
        }

        @Override
        public void stepStarted(String transport, int step, Level level) {
            sink.stepStarted(transport, step, level);
        }

        @Override
        public void progress(String transport, int step, Phase phase, long elapsedNs, long totalNs, long sent,
                             long received) {
            sink.progress(transport, step, phase, elapsedNs, totalNs, sent, received);
        }

        /** Waits (on the engine's thread, between steps) for the probe's same step, its drain at most. */
        @Override
        public void stepFinished(StepResult result) {
            StepResult p = null;
            try {
                p = probeStep(result.transport(), result.step()).get(waitForProbeMs, TimeUnit.MILLISECONDS);
            } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
                // The probe failed or stopped: the step is shown without it (the run reports the probe's error).
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            sink.stepFinished(p == null ? result : result.withProbe(probeOf(p)));
        }

        @Override
        public void stepHistogram(String transport, int step, String kind, SignedHistogram histogram,
                                  long startEpochMs, long endEpochMs) {
            sink.stepHistogram(transport, step, kind, histogram, startEpochMs, endEpochMs);
        }

        @Override
        public void stepIntervalHistograms(String transport, int step, String kind, SignedHistogram[] intervals,
                                           SignedHistogram whole, long windowStartEpochMs, long intervalNs,
                                           long windowNs) {
            sink.stepIntervalHistograms(transport, step, kind, intervals, whole, windowStartEpochMs, intervalNs,
                windowNs);
        }

        @Override
        public void trialFinished(String transport, int messageSize, SearchTrial trial,
                                  Map<String, String> verdicts) {
            sink.trialFinished(transport, messageSize, trial, verdicts);
        }

        @Override
        public void searchFinished(List<SearchResult> found) {
            sink.searchFinished(found);
        }

        @Override
        public void resultsUpdated(RunResult partial) {
            sink.resultsUpdated(withProbes(partial, latestProbe));
        }
    }
}
