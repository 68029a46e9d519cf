package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.HdrHistogram.Histogram;

/**
 * A latency distribution in nanoseconds, from an HdrHistogram.
 *
 * @param count         values recorded
 * @param basis         what the values are measured against: absent for one clock (the same host, or a round trip
 *                      on the requester's clock); {@value #CLOCK_OFFSET} for a one-way delay between two hosts,
 *                      corrected by the clock offset estimated over the control channel, true to
 *                      {@code uncertaintyNs}; {@value #OVER_BASELINE} for the excess over each flow's own baseline
 *                      (see the step's {@code delayBaseline})
 * @param uncertaintyNs for {@value #CLOCK_OFFSET}: every value may be off by up to this much either way (the
 *                      estimate's bound plus the clocks' drift over the step); values below zero are possible
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Latency(long count, double meanNs, long minNs, long p50Ns, long p90Ns, long p99Ns, long p999Ns,
                      long maxNs, String basis, Long uncertaintyNs) {

    public static final String CLOCK_OFFSET = "clockOffset";
    public static final String OVER_BASELINE = "overBaseline";
    public static final Latency EMPTY = new Latency(0, 0, 0, 0, 0, 0, 0, 0, null, null);
    /** Largest value any lossprobe histogram tracks: one hour in ns (larger values are clamped to it). */
    public static final long HIGHEST_TRACKABLE_NS = 3_600_000_000_000L;

    /** The histogram every delay, lag, IPDV and round trip is recorded in: ns, 2 significant digits (1%). */
    public static Histogram newHistogram() {
        return new Histogram(HIGHEST_TRACKABLE_NS, 2);
    }

    /** A distribution on one clock. */
    public static Latency of(Histogram h) {
        if (h.getTotalCount() == 0) {
            return EMPTY;
        }
        return new Latency(h.getTotalCount(), h.getMean(), h.getMinValue(), h.getValueAtPercentile(50),
            h.getValueAtPercentile(90), h.getValueAtPercentile(99), h.getValueAtPercentile(99.9),
            h.getMaxValue(), null, null);
    }

    /** A distribution that may go below zero, with what it is measured against. */
    public static Latency of(SignedHistogram h, String basis, Long uncertaintyNs) {
        if (h.count() == 0) {
            return new Latency(0, 0, 0, 0, 0, 0, 0, 0, basis, uncertaintyNs);
        }
        return new Latency(h.count(), h.mean(), h.min(), h.valueAtPercentile(50), h.valueAtPercentile(90),
            h.valueAtPercentile(99), h.valueAtPercentile(99.9), h.max(), basis, uncertaintyNs);
    }
}
