package io.lossprobe.cli;

import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.result.OutputFiles;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.result.SignedHistogram;
import io.lossprobe.core.result.StepResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Prints rows and progress, and rewrites the results file after every step (a device or FIFO, a stream, gets the
 * final result once). The first write that fails (a full disk) stops the run: what could not be saved is not
 * worth measuring on, and the file must not be left saying {@code running}. From then on the results are
 * written with status {@code failed} and the error; when even that does not fit, the file already written is
 * marked {@code failed} in place.
 */
final class RunOutput implements RunListener {
    private final Path file;
    private final PrintWriter out;
    private final PrintWriter err;
    private final boolean progress;
    /** With --hlog: the histogram logs beside the results, else null. */
    private final HistogramLogs logs;
    private boolean stream;
    /** With -o -: where the final results go (stdout), else null. */
    private PrintWriter resultsOut;
    /** With --stream: the JSON lines, else null. */
    private JsonLines lines;
    private java.io.OutputStream linesOut;
    private boolean headerShown;
    /** The receivers' address is IPv6: 40-byte IP headers in the wire rate. */
    private boolean ipv6;
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
    private RunStatus fileStatus;

    RunOutput(Path file, PrintWriter out, PrintWriter err, boolean progress, boolean hlog) {
        this.logs = hlog ? new HistogramLogs(file, this::failed) : null;
        this.file = file;
        this.out = out;
        this.err = err;
        this.progress = progress;
        this.stream = OutputFiles.isStream(file);
    }

    void ipv6(boolean v6) {
        this.ipv6 = v6;
    }

    /** With -o -: the results go to {@code stdout} once, at the end. */
    void toStdout(PrintWriter stdout) {
        this.resultsOut = stdout;
        this.stream = true;
    }

    /** With --stream: JSON lines to {@code target} as the run goes. */
    void stream(java.io.OutputStream target) {
        this.linesOut = target;
        this.lines = new JsonLines(target);
    }

    void closeStream() {
        if (linesOut == null) {
            return;
        }
        try {
            lines.end(fileStatus == null ? "unknown" : fileStatus.json());
            linesOut.close();
        } catch (IOException e) {
            err.println("lossprobe: cannot write --stream: " + reason(e));
        }
        linesOut = null;
    }

    private void streamLine(IOAction action) {
        if (lines == null) {
            return;
        }
        try {
            action.run();
        } catch (IOException e) {
            failed("cannot write --stream: " + reason(e));
        }
    }

    private interface IOAction {
        void run() throws IOException;
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
    RunStatus fileStatus() {
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
    public void stepIntervalHistograms(String transport, int step, String kind, SignedHistogram[] intervals,
                                       SignedHistogram whole, long windowStartEpochMs, long intervalNs,
                                       long windowNs) {
        if (logs != null) {
            logs.perInterval(transport, step, kind, intervals, whole, windowStartEpochMs, intervalNs, windowNs);
        }
    }

    @Override
    public void stepHistogram(String transport, int step, String kind, SignedHistogram delays, long startEpochMs,
                              long endEpochMs) {
        if (logs != null) {
            logs.wholeStep(transport, step, kind, delays, startEpochMs, endEpochMs);
        }
    }

    @Override
    public void trialFinished(String transport, int messageSize, io.lossprobe.core.result.SearchTrial trial,
                              Map<String, String> verdicts) {
        closeProgress();
        out.println(StepTable.trial(transport, messageSize, trial, verdicts));
        out.flush();
        streamLine(() -> lines.trial(transport, messageSize, trial, verdicts));
    }

    @Override
    public void searchFinished(List<io.lossprobe.core.result.SearchResult> found) {
        closeProgress();
        for (io.lossprobe.core.result.SearchResult s : found) {
            out.println(StepTable.finding(s));
            streamLine(() -> lines.search(s));
        }
        out.flush();
    }

    /** A multicast receiver lost mid-run: one line at once, on stderr (the run goes on). */
    @Override
    public void receiverGone(String receiver, String why) {
        closeProgress();
        err.println("lossprobe: warning: receiver " + receiver + " is gone (" + why + "); the run goes on with the "
            + "others, counting everything sent as lost to it");
        err.flush();
    }

    @Override
    public void stepFinished(StepResult result) {
        closeProgress();
        if (!headerShown) {
            out.println(StepTable.header()); // a search alone prints no step rows, so no header either
            headerShown = true;
        }
        out.println(StepTable.row(result, result.messageSize() == null ? 0 : result.messageSize(), ipv6));
        streamLine(() -> lines.step(result));
        if (result.echo() != null) {
            out.println(StepTable.echoRow(result));
        }
        if (result.probe() != null) {
            out.println(StepTable.probeRow(result));
        }
        if (result.sizes() != null) {
            out.println(StepTable.sizesRow(result));
        }
        if (result.receivers() != null) {
            StepTable.receiverRows(result).forEach(out::println);
        }
        for (String w : result.warnings()) {
            out.println("  WARNING: " + w);
        }
        out.flush();
    }

    @Override
    public void resultsUpdated(RunResult partial) {
        if (stream && partial.status() == RunStatus.RUNNING) {
            return; // a stream cannot be rewritten: it gets the final result
        }
        RunResult result = writeFailure == null ? partial : partial.withStatus(RunStatus.FAILED, writeFailure);
        try {
            write(result);
        } catch (IOException e) {
            failed("cannot write results to " + file + ": " + reason(e));
        }
    }

    private void write(RunResult result) throws IOException {
        byte[] bytes = ResultFiles.mapper().writeValueAsBytes(result);
        upToDate = false;
        if (resultsOut != null) {
            resultsOut.println(new String(bytes, java.nio.charset.StandardCharsets.UTF_8));
            resultsOut.flush();
            lastWritten = null;
            upToDate = true;
            fileStatus = result.status();
            return;
        }
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
                fileStatus = RunStatus.FAILED;
            }
        } catch (IOException e) {
            err.println("lossprobe: cannot mark " + file + " failed: " + reason(e));
            err.flush();
        }
    }

    /** An I/O failure's reason as the system states it ("No space left on device"), or its type. */
    static String reason(IOException e) {
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
