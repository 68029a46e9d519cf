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
 * @param timestampSource where the arrival times came from: {@code kernel} (stamped as the datagram was queued
 *                      at the receiving socket), {@code user} (read by the receiving thread after its read
 *                      returned), {@code mixed}; absent in files written before it existed and for figures that
 *                      are not arrival times (the sender's lag)
 * @param timing        the timing mode the figure was measured in: {@code default} or {@code precision} (see
 *                      docs/measurement.md, "The instrument's floor"); absent in older files
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Latency(long count, double meanNs, long minNs, long p50Ns, long p90Ns, long p99Ns, long p999Ns,
                      long maxNs, String basis, Long uncertaintyNs, String timestampSource, String timing) {

    public static final String CLOCK_OFFSET = "clockOffset";
    public static final String OVER_BASELINE = "overBaseline";
    public static final Latency EMPTY = new Latency(0, 0, 0, 0, 0, 0, 0, 0, null, null);

    /** A figure without its timestamp source and timing mode (both absent). */
    public Latency(long count, double meanNs, long minNs, long p50Ns, long p90Ns, long p99Ns, long p999Ns,
                   long maxNs, String basis, Long uncertaintyNs) {
        this(count, meanNs, minNs, p50Ns, p90Ns, p99Ns, p999Ns, maxNs, basis, uncertaintyNs, null, null);
    }

    /** The same figure, saying where its arrival times came from and in which timing mode it was measured. */
    public Latency measuredBy(String timestampSource, String timing) {
        return new Latency(count, meanNs, minNs, p50Ns, p90Ns, p99Ns, p999Ns, maxNs, basis, uncertaintyNs,
            timestampSource, timing);
    }
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
