package io.lossprobe.analysis;

import io.lossprobe.core.result.HistogramDecoder;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.StepResult;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * A step's delay (or round-trip) distribution for the percentile plot: from the HdrHistogram log {@code run --hlog}
 * wrote beside the result ({@code RESULT.<transport>.step<N>.<delay|rtt>.hlog}) when it is there, else from the
 * percentiles the result holds (min, p50, p90, p99, p99.9, max).
 */
final class StepDistributions {
    /** The writer moves a signed histogram up by its minimum and says so in a comment; undone here. */
    private static final Pattern SHIFT = Pattern.compile("every value is the delay plus (\\d+) ns");
    private static final int TICKS_PER_HALF = 5;
    /**
     * The largest step log read (a step's log holds one compressed histogram per interval, a few KiB each: an hour's
     * step at 1 s intervals is about 7 MiB); a bigger one is not lossprobe's, and the summary is drawn instead.
     */
    static final long MAX_LOG_BYTES = 64L << 20;
    /**
     * What a transport's name (and a log's kind) may be to name a log file: the result's {@code transport} is the
     * file's, so anything that could climb out of the result's directory or name another ({@code ../../x}) is not
     * looked up.
     */
    private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,63}");

    private StepDistributions() {
    }

    /** {@code kind} is {@code delay} or {@code rtt}; null when the step has no such values. */
    static DelayCharts.Distribution of(Path resultFile, StepResult step, String kind) {
        Latency summary = kind.equals("rtt") ? step.echo() == null ? null : step.echo().rtt() : step.delay();
        if (summary == null || summary.count() == 0) {
            return null;
        }
        Path log = hlogOf(resultFile, step, kind);
        if (log != null && Files.isRegularFile(log)) {
            try {
                DelayCharts.Distribution full = fromLog(log, step.level().toString());
                if (full != null) {
                    return full;
                }
            } catch (IOException | RuntimeException e) {
                // An unreadable log: the summary still tells the shape.
            }
        }
        return fromSummary(summary, step.level().toString());
    }

    static Path hlogOf(Path resultFile, StepResult step, String kind) {
        Path name = resultFile.getFileName();
        if (name == null) {
            return null;
        }
        if (!SAFE_NAME.matcher(step.transport()).matches() || !SAFE_NAME.matcher(kind).matches()) {
            return null; // a name from the file that is not a transport's ("../x", "a/b"): no log beside it
        }
        String base = name.toString().replaceFirst("\\.json$", "");
        return resultFile.toAbsolutePath().resolveSibling(base + "." + step.transport() + ".step" + step.step()
            + "." + kind + ".hlog");
    }

    static DelayCharts.Distribution fromSummary(Latency l, String level) {
        // min at 0 (x = 1), max at the last value's percentile, 1 - 1/count.
        double[] x = {1, 2, 10, 100, 1000, Math.max(1000, l.count())};
        double[] ms = {l.minNs() / 1e6, l.p50Ns() / 1e6, l.p90Ns() / 1e6, l.p99Ns() / 1e6, l.p999Ns() / 1e6,
            l.maxNs() / 1e6};
        return new DelayCharts.Distribution(level, x, ms, false);
    }

    /**
     * The log's interval histograms summed. Read line by line rather than by HdrHistogram's log reader, so that every
     * histogram goes through {@link HistogramDecoder} (its header's ranges checked before anything is allocated
     * from them): a crafted log is refused, not an OutOfMemoryError.
     */
    private static DelayCharts.Distribution fromLog(Path log, String level) throws IOException {
        if (Files.size(log) > MAX_LOG_BYTES) {
            return null; // bounds every line read from it: a crafted log of one endless line is never read
        }
        long shift = 0;
        Histogram all = null;
        try (BufferedReader r = Files.newBufferedReader(log, StandardCharsets.UTF_8)) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.startsWith("#")) {
                    Matcher m = SHIFT.matcher(line);
                    if (m.find()) {
                        shift = Long.parseLong(m.group(1));
                    }
                    continue;
                }
                if (line.isBlank() || line.startsWith("\"")) {
                    continue; // the legend
                }
                String encoded = line.substring(line.lastIndexOf(',') + 1).trim();
                Histogram hist = HistogramDecoder.decodeCompressed(
                    ByteBuffer.wrap(Base64.getDecoder().decode(encoded)));
                if (all == null) {
                    all = hist.copy();
                } else {
                    all.add(hist);
                }
            }
        }
        if (all == null || all.getTotalCount() == 0) {
            return null;
        }
        List<double[]> points = new ArrayList<>();
        points.add(new double[] {1, (all.getMinValue() - shift) / 1e6});
        for (HistogramIterationValue v : all.percentiles(TICKS_PER_HALF)) {
            double p = v.getPercentileLevelIteratedTo();
            if (p >= 100.0 || p <= 0) {
                continue;
            }
            points.add(new double[] {100.0 / (100.0 - p), (v.getValueIteratedTo() - shift) / 1e6});
        }
        points.add(new double[] {Math.max(points.get(points.size() - 1)[0], all.getTotalCount()),
            (all.getMaxValue() - shift) / 1e6});
        double[] x = new double[points.size()];
        double[] ms = new double[points.size()];
        for (int i = 0; i < points.size(); i++) {
            x[i] = points.get(i)[0];
            ms[i] = points.get(i)[1];
        }
        return new DelayCharts.Distribution(level, x, ms, true);
    }
}
