package io.lossprobe.cli;

import io.lossprobe.control.ControlClient;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.OutputFiles;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.Transports;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code lossprobe run}: steps every transport through the levels and writes the results. With no options it runs
 * the embedded default: senders and receivers in this process, on loopback.
 */
@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Steps each transport through the target rates and counts loss, duplicates, reordering, late "
        + "arrivals, send refusals and kernel drops per flow and step.",
        "With no options: every transport, 48 ports on 127.0.0.1, levels 30k,100k,1M, 3s per step."},
    footer = {"", "Exit codes: 0 ok, 1 runtime failure, 2 bad usage, 130 interrupted (partial results written)."})
public final class RunCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Mixin
    PlanOptions planOptions;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE",
        description = "Results JSON, rewritten after every step. Default: lossprobe-YYYYMMDD-HHMMSS.json.")
    Path output;

    @Option(names = "--mode", defaultValue = "stream", paramLabel = "MODE",
        description = "stream (one way) or echo (request/response: the receiver answers every message; TPS and "
            + "round-trip percentiles, loss by direction). Default: ${DEFAULT-VALUE}.")
    String mode;

    @Option(names = "--concurrency", defaultValue = "0", paramLabel = "N",
        description = "Echo mode: at most N requests outstanding per flow (closed loop; use with --levels max). "
            + "0 = open loop on the schedule. Default: ${DEFAULT-VALUE}.")
    int concurrency;

    @Option(names = "--hlog", description = "Write each step's delay (and round-trip) histogram as an HdrHistogram "
        + "log next to the results: RESULTS.<transport>.step<N>.<delay|rtt>.hlog")
    boolean hlog;

    @Option(names = "--bind", defaultValue = "127.0.0.1", paramLabel = "ADDR",
        description = "Receivers' address (the senders' target in the embedded run). Default: ${DEFAULT-VALUE}.")
    String bind;

    @Option(names = "--target", paramLabel = "HOST[:PORT]",
        description = "Send to a 'lossprobe serve' on HOST (control port 7400 unless given); receivers run there.")
    String target;

    @Option(names = "--secret-file", paramLabel = "FILE",
        description = "Shared secret for --target (else $LOSSPROBE_SECRET).")
    Path secretFile;

    @Option(names = "--reverse",
        description = "With --target: the server sends and this host receives (on --bind; 0.0.0.0 unless given). "
            + "The server only ever sends to this host's own address.")
    boolean reverse;

    @Option(names = "--policy", paramLabel = "POLICY.json",
        description = "After the run, check the results against this policy (as 'lossprobe check'); exit 1 if a "
            + "limit fails.")
    Path policy;

    @Option(names = "--baseline", paramLabel = "FILE", description = "With --policy: baseline result to compare with.")
    Path baseline;

    @Option(names = "--prometheus", paramLabel = "FILE",
        description = "Write the run's numbers (and with --policy the check) as a Prometheus textfile, atomically; "
            + "also when the run fails or is interrupted.")
    Path prometheus;

    @Option(names = "--junit", paramLabel = "FILE", description = "With --policy: write JUnit XML.")
    Path junit;

    @Option(names = "--quiet", description = "No progress line.")
    boolean quiet;

    @Override
    public Integer call() throws Exception {
        if (reverse && target == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--reverse needs --target");
        }
        if (reverse && "echo".equals(mode)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--mode echo does not go with --reverse");
        }
        if (policy == null && (baseline != null || junit != null)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--baseline and --junit go with --policy");
        }
        if (policy != null) {
            try {
                io.lossprobe.analysis.Policy.read(policy); // a bad policy fails before any traffic
            } catch (io.lossprobe.analysis.InputException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
        }
        Map<String, String> options = planOptions.transportOptionsInEffect();
        Plan plan = buildPlan(options);
        Map<String, Transport> available = Transports.available();
        for (String t : plan.transports()) {
            if (!available.containsKey(t)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "unknown transport '" + t
                    + "' (available: " + String.join(", ", available.keySet()) + ")");
            }
        }
        Path out = output != null ? output : Path.of("lossprobe-"
            + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + ".json");
        PrintWriter stdout = spec.commandLine().getOut();
        PrintWriter stderr = spec.commandLine().getErr();
        planOptions.check(spec.commandLine(), options, available, plan, stderr);

        Output sink = new Output(out, stdout, stderr, !quiet, hlog);
        // Every output path is checked before any traffic: a typo must not cost a long run.
        Inputs.requireWritable(spec.commandLine(), out, "results to");
        Inputs.requireWritable(spec.commandLine(), prometheus, "--prometheus");
        Inputs.requireWritable(spec.commandLine(), junit, "--junit");
        if (hlog && sink.stream()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--hlog writes its logs beside the results: "
                + "give -o a file, not the device " + out);
        }
        RemoteRun remote = null;
        RunEngine engine;
        if (target != null) {
            HostPort hp = HostPort.parse(target, ControlClient.DEFAULT_PORT);
            try {
                remote = RemoteRun.open(hp, RemoteRun.secret(secretFile, stderr), plan, options, available, reverse, sink,
                    RemoteRun.CONNECT_TIMEOUT_MS);
            } catch (java.net.UnknownHostException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            engine = remote.engine();
        } else {
            engine = new RunEngine(plan, available, options, sink, StepHooks.NONE);
        }
        sink.onWriteFailure(engine::requestStop);
        try {
            sink.writeInitial(engine.snapshot("running", null));
        } catch (RuntimeException e) {
            if (remote != null) {
                remote.close();
            }
            throw e;
        }

        CountDownLatch finished = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            engine.requestStop();
            try {
                finished.await(15, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "lossprobe-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        stdout.printf("lossprobe: %s over %d ports from %s, levels %s, %s per step; results -> %s%n",
            String.join(",", plan.transports()), plan.ports(), HostPort.format(plan.bindAddress(), plan.basePort()),
            planOptions.levels, planOptions.duration, out);
        stdout.println(StepTable.header());
        stdout.flush();
        try {
            RunResult result;
            try {
                result = engine.run();
            } catch (Exception e) {
                textfileOfFailedRun(out, stderr);
                throw e;
            }
            if (sink.writeFailure() != null) {
                stderr.println("lossprobe: " + result.steps().size() + " step(s) measured; "
                    + (sink.resultsWritten() ? out + " holds them, status failed"
                    : sink.fileStatus() == null ? "nothing written to " + out
                    : out + " holds fewer, status " + sink.fileStatus()));
                textfileOfFailedRun(out, stderr);
                return 1;
            }
            if ("interrupted".equals(result.status())) {
                stderr.println("lossprobe: interrupted; " + result.steps().size() + " completed step(s) written to "
                    + out);
                textfileOfFailedRun(out, stderr);
                return 130;
            }
            stdout.println("results written to " + out);
            stdout.flush();
            if (policy != null) {
                return checkInline(out);
            }
            if (prometheus != null) {
                writeTextfile(out);
            }
            return 0;
        } finally {
            if (remote != null) {
                remote.close();
            }
            sink.closeProgress();
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // Already shutting down (Ctrl-C): the hook is running and waits for us.
            }
        }
    }

    /** The textfile without a check: the run's numbers, labelled with the target as typed. */
    private void writeTextfile(Path results) throws IOException {
        try {
            io.lossprobe.analysis.LoadedResult loaded = io.lossprobe.analysis.LoadedResult.read(results);
            io.lossprobe.analysis.PrometheusTextfile.write(prometheus, loaded,
                io.lossprobe.analysis.RunLabels.of(loaded.run()).withTarget(targetLabel()), java.util.Optional.empty());
        } catch (io.lossprobe.analysis.InputException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /** A run that failed or was interrupted still updates the textfile, so its status shows; best effort. */
    private void textfileOfFailedRun(Path results, PrintWriter stderr) {
        if (prometheus == null || !Files.isRegularFile(results)) {
            return;
        }
        try {
            writeTextfile(results);
        } catch (IOException | RuntimeException e) {
            stderr.println("lossprobe: cannot write " + prometheus + ": " + e.getMessage());
        }
    }

    /** The host of --target as typed, for the textfile's target label; null for a run on this host. */
    private String targetLabel() {
        return target == null ? null : HostPort.parse(target, ControlClient.DEFAULT_PORT).host();
    }

    /** The same check as 'lossprobe check --policy ...' on the file just written; its exit code is ours. */
    private int checkInline(Path results) {
        List<String> args = new ArrayList<>(List.of("--policy", policy.toString()));
        if (baseline != null) {
            args.addAll(List.of("--baseline", baseline.toString()));
        }
        if (prometheus != null) {
            args.addAll(List.of("--prometheus", prometheus.toString()));
            if (target != null) {
                args.addAll(List.of("--target-label", targetLabel()));
            }
        }
        if (junit != null) {
            args.addAll(List.of("--junit", junit.toString()));
        }
        args.add(results.toString());
        CommandLine check = spec.commandLine().getParent().getSubcommands().get("check");
        return check.execute(args.toArray(String[]::new));
    }

    private Plan buildPlan(Map<String, String> options) {
        String receivers = bind;
        if (target != null && !reverse) {
            receivers = HostPort.parse(target, ControlClient.DEFAULT_PORT).host();
        } else if (reverse && !spec.commandLine().getParseResult().hasMatchedOption("--bind")) {
            receivers = "0.0.0.0"; // the server sends to this host's address as it sees it
        }
        return planOptions.plan(receivers, mode, concurrency, options);
    }

    /**
     * Prints rows and progress, and rewrites the results file after every step (a device or FIFO, a stream, gets the
     * final result once). The first write that fails (a full disk) stops the run: what could not be saved is not
     * worth measuring on, and the file must not be left saying {@code running}. From then on the results are
     * written with status {@code failed} and the error; when even that does not fit, the file already written is
     * marked {@code failed} in place.
     */
    static final class Output implements RunListener {
        private final Path file;
        private final PrintWriter out;
        private final PrintWriter err;
        private final boolean progress;
        private final boolean hlog;
        private final boolean stream;
        private final boolean terminal = System.console() != null;
        private long lastProgressNs;
        private boolean progressShown;
        private Runnable onWriteFailure = () -> { };
        /** The first output that could not be written, and why: one line. */
        private String writeFailure;
        /** The bytes last written to {@code file}, for marking it failed in place. */
        private byte[] lastWritten;
        /** Whether {@code file} now holds the run as it stands (false after a write failed). */
        private boolean upToDate;
        /** The status the results file now says, null before the first write. */
        private String fileStatus;

        Output(Path file, PrintWriter out, PrintWriter err, boolean progress, boolean hlog) {
            this.hlog = hlog;
            this.file = file;
            this.out = out;
            this.err = err;
            this.progress = progress;
            this.stream = OutputFiles.isStream(file);
        }

        /** Called (once, on the engine's thread) when an output cannot be written: stops the run. */
        void onWriteFailure(Runnable action) {
            this.onWriteFailure = action;
        }

        /** The first write failure as one line, or null when every output was written. */
        String writeFailure() {
            return writeFailure;
        }

        /** Whether the results file holds the final result. */
        boolean resultsWritten() {
            return upToDate;
        }

        /** The status the results file now says (null when nothing was written: a stream, or the first write). */
        String fileStatus() {
            return fileStatus;
        }

        boolean stream() {
            return stream;
        }

        /**
         * The first write, before any traffic. A path that cannot be written is bad usage (exit 2); a full disk
         * is a runtime failure (exit 1). A stream is written once, at the end.
         */
        void writeInitial(RunResult initial) {
            if (stream) {
                return;
            }
            try {
                write(initial);
            } catch (OutputFiles.Refused e) {
                throw new IllegalArgumentException("cannot write results: " + e.getMessage());
            } catch (java.nio.file.AccessDeniedException | java.nio.file.NoSuchFileException e) {
                throw new IllegalArgumentException("cannot write results to " + file + ": " + reason(e));
            } catch (IOException e) {
                throw new IllegalStateException("cannot write results to " + file + ": " + reason(e));
            }
        }

        @Override
        public void progress(String transport, int step, Phase phase, long elapsedNs, long totalNs, long sent,
                             long received) {
            if (!progress) {
                return;
            }
            long now = System.nanoTime();
            long every = terminal ? 200_000_000L : 5_000_000_000L;
            if (now - lastProgressNs < every) {
                return;
            }
            lastProgressNs = now;
            String line = String.format("  %-5s step %d %-6s %5.1fs/%.1fs sent %,d received %,d", transport, step,
                phase.name().toLowerCase(java.util.Locale.ROOT), elapsedNs / 1e9, totalNs / 1e9, sent, received);
            if (terminal) {
                err.print("\r" + line + "    ");
                progressShown = true;
            } else {
                err.println(line);
            }
            err.flush();
        }

        @Override
        public void stepHistogram(String transport, int step, String kind,
                                  io.lossprobe.core.result.SignedHistogram delays, long startEpochMs,
                                  long endEpochMs) {
            if (!hlog) {
                return;
            }
            String base = file.getFileName().toString().replaceFirst("\\.json$", "");
            Path log = file.toAbsolutePath().resolveSibling(base + "." + transport + ".step" + step + "." + kind
                + ".hlog");
            java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
            try (java.io.PrintStream ps = new java.io.PrintStream(bytes, false,
                java.nio.charset.StandardCharsets.UTF_8)) {
                org.HdrHistogram.HistogramLogWriter w = new org.HdrHistogram.HistogramLogWriter(ps);
                // HdrHistogram logs hold no values below zero: a one-way delay between hosts that has some (within
                // the clock estimate's uncertainty) is written moved up by its minimum's magnitude, and says so.
                long shift = Math.max(0, -delays.min());
                org.HdrHistogram.Histogram histogram = shift == 0 ? delays.atOrAboveZero()
                    : delays.shiftedBy(shift).atOrAboveZero();
                w.outputComment("lossprobe " + transport + " step " + step + " " + kind + " (ns)"
                    + (shift == 0 ? "" : "; every value is the delay plus " + shift + " ns"));
                w.outputLogFormatVersion();
                w.outputStartTime(startEpochMs);
                w.setBaseTime(startEpochMs);
                w.outputLegend();
                histogram.setStartTimeStamp(startEpochMs);
                histogram.setEndTimeStamp(endEpochMs);
                w.outputIntervalHistogram(histogram);
            }
            // The log's name is predictable from the results': written like them, a link planted there is replaced.
            try {
                OutputFiles.write(log, bytes.toByteArray());
            } catch (IOException e) {
                failed("cannot write " + log + ": " + reason(e));
            }
        }

        @Override
        public void stepFinished(StepResult result) {
            closeProgress();
            out.println(StepTable.row(result));
            if (result.echo() != null) {
                out.println(StepTable.echoRow(result));
            }
            for (String w : result.warnings()) {
                out.println("  WARNING: " + w);
            }
            out.flush();
        }

        @Override
        public void resultsUpdated(RunResult partial) {
            if (stream && "running".equals(partial.status())) {
                return; // a stream cannot be rewritten: it gets the final result
            }
            RunResult result = writeFailure == null ? partial
                : partial.withStatus("failed", writeFailure);
            try {
                write(result);
            } catch (IOException e) {
                failed("cannot write results to " + file + ": " + reason(e));
            }
        }

        private void write(RunResult result) throws IOException {
            byte[] bytes = ResultFiles.mapper().writeValueAsBytes(result);
            upToDate = false;
            OutputFiles.write(file, bytes);
            lastWritten = bytes;
            upToDate = true;
            fileStatus = result.status();
        }

        /** The first failure is printed, stops the run, and marks the results file failed if nothing else can. */
        private void failed(String line) {
            if (writeFailure != null) {
                return;
            }
            writeFailure = line;
            closeProgress();
            err.println("lossprobe: " + line);
            err.flush();
            onWriteFailure.run();
            if (stream || lastWritten == null) {
                return;
            }
            // Needs no space: the file keeps the steps it had and says failed. The engine's final snapshot, written
            // as failed with this line, replaces it if there is room by then.
            try {
                if (ResultFiles.markFailedInPlace(file, lastWritten)) {
                    lastWritten = null;
                    fileStatus = "failed";
                }
            } catch (IOException e) {
                err.println("lossprobe: cannot mark " + file + " failed: " + reason(e));
                err.flush();
            }
        }

        /** An I/O failure's reason as the system states it ("No space left on device"), or its type. */
        private static String reason(IOException e) {
            if (e instanceof java.nio.file.FileSystemException fse && fse.getReason() != null) {
                return fse.getReason();
            }
            return LossprobeCommand.describe(e);
        }

        void closeProgress() {
            if (progressShown) {
                err.print("\r" + " ".repeat(100) + "\r");
                err.flush();
                progressShown = false;
            }
        }
    }

}
