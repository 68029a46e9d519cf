package io.lossprobe.cli;

import io.lossprobe.core.result.OutputFiles;
import io.lossprobe.core.result.SignedHistogram;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

/**
 * {@code run --hlog}: each step's delay (and round-trip) histograms as HdrHistogram logs beside the results,
 * {@code RESULTS.<transport>.step<N>.<kind>.hlog}, one histogram per interval when the run counts intervals.
 */
final class HistogramLogs {
    private final Path results;
    private final Consumer<String> onFailure;
    /** Steps whose delay log was written per interval: their whole-step log is not written over it. */
    private final Set<String> loggedPerInterval = new HashSet<>();

    /** {@code onFailure} gets one line when a log cannot be written. */
    HistogramLogs(Path results, Consumer<String> onFailure) {
        this.results = results;
        this.onFailure = onFailure;
    }

    void perInterval(String transport, int step, String kind, SignedHistogram[] intervals, SignedHistogram whole,
                     long windowStartEpochMs, long intervalNs, long windowNs) {
        List<SignedHistogram> parts = new ArrayList<>();
        List<long[]> spans = new ArrayList<>();
        long intervalMs = intervalNs / 1_000_000;
        for (int i = 0; i < intervals.length; i++) {
            long start = windowStartEpochMs + i * intervalMs;
            long end = i == intervals.length - 1 ? windowStartEpochMs + windowNs / 1_000_000 : start + intervalMs;
            parts.add(intervals[i]);
            spans.add(new long[] {start, Math.max(start, end)});
        }
        writeLog(transport, step, kind, parts, spans, whole, " per interval of " + StepTable.nanos(intervalNs));
        loggedPerInterval.add(transport + "/" + step + "/" + kind);
    }

    void wholeStep(String transport, int step, String kind, SignedHistogram delays, long startEpochMs,
                   long endEpochMs) {
        if (loggedPerInterval.remove(transport + "/" + step + "/" + kind)) {
            return;
        }
        writeLog(transport, step, kind, List.of(delays), List.of(new long[] {startEpochMs, endEpochMs}), delays, "");
    }

    /** One log of one or more interval histograms, all moved by the whole's minimum when it is below zero. */
    private void writeLog(String transport, int step, String kind, List<SignedHistogram> parts, List<long[]> spans,
                          SignedHistogram whole, String what) {
        String base = results.getFileName().toString().replaceFirst("\\.json$", "");
        Path log = results.toAbsolutePath().resolveSibling(base + "." + transport + ".step" + step + "." + kind
            + ".hlog");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream ps = new PrintStream(bytes, false, StandardCharsets.UTF_8)) {
            HistogramLogWriter w = new HistogramLogWriter(ps);
            // HdrHistogram logs hold no values below zero: a one-way delay between hosts that has some (within
            // the clock estimate's uncertainty) is written moved up by its minimum's magnitude, and says so.
            long shift = Math.max(0, -whole.min());
            long startEpochMs = spans.get(0)[0];
            w.outputComment("lossprobe " + transport + " step " + step + " " + kind + " (ns)" + what
                + (shift == 0 ? "" : "; every value is the delay plus " + shift + " ns"));
            w.outputLogFormatVersion();
            w.outputStartTime(startEpochMs);
            w.setBaseTime(startEpochMs);
            w.outputLegend();
            for (int i = 0; i < parts.size(); i++) {
                SignedHistogram part = parts.get(i);
                Histogram histogram = shift == 0 ? part.atOrAboveZero() : part.shiftedBy(shift).atOrAboveZero();
                histogram.setStartTimeStamp(spans.get(i)[0]);
                histogram.setEndTimeStamp(spans.get(i)[1]);
                w.outputIntervalHistogram(histogram);
            }
        }
        // The log's name is predictable from the results': written like them, a link planted there is replaced.
        try {
            OutputFiles.write(log, bytes.toByteArray());
        } catch (IOException e) {
            onFailure.accept("cannot write " + log + ": " + RunOutput.reason(e));
        }
    }
}
