package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.HdrHistogram.Histogram;

/**
 * A latency distribution in nanoseconds, from an HdrHistogram.
 *
 * @param count      values recorded
 * @param offsetFree true when values are in excess of the minimum seen (sender and receiver clocks differ)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Latency(long count, double meanNs, long minNs, long p50Ns, long p90Ns, long p99Ns, long p999Ns,
                      long maxNs, Boolean offsetFree) {

    public static final Latency EMPTY = new Latency(0, 0, 0, 0, 0, 0, 0, 0, null);
    /** Largest value any lossprobe histogram tracks: one hour in ns (larger values are clamped to it). */
    public static final long HIGHEST_TRACKABLE_NS = 3_600_000_000_000L;

    /** The histogram every delay, lag, IPDV and round trip is recorded in: ns, 2 significant digits (1%). */
    public static Histogram newHistogram() {
        return new Histogram(HIGHEST_TRACKABLE_NS, 2);
    }

    /** The distribution shifted so its minimum is 0: delay in excess of the smallest seen (offset-free). */
    public static Latency excessOverMin(Histogram h) {
        if (h.getTotalCount() == 0) {
            return new Latency(0, 0, 0, 0, 0, 0, 0, 0, Boolean.TRUE);
        }
        long min = h.getMinValue();
        return new Latency(h.getTotalCount(), h.getMean() - min, 0, h.getValueAtPercentile(50) - min,
            h.getValueAtPercentile(90) - min, h.getValueAtPercentile(99) - min, h.getValueAtPercentile(99.9) - min,
            h.getMaxValue() - min, Boolean.TRUE);
    }

    public static Latency of(Histogram h, Boolean offsetFree) {
        if (h.getTotalCount() == 0) {
            return offsetFree == null ? EMPTY : new Latency(0, 0, 0, 0, 0, 0, 0, 0, offsetFree);
        }
        return new Latency(h.getTotalCount(), h.getMean(), h.getMinValue(), h.getValueAtPercentile(50),
            h.getValueAtPercentile(90), h.getValueAtPercentile(99), h.getValueAtPercentile(99.9),
            h.getMaxValue(), offsetFree);
    }
}
