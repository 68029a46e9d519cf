package io.lossprobe.core.result;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * A delay distribution that may hold values below zero, as two HdrHistograms: values at or above zero, and the
 * magnitudes of values below it (made only when one comes). Between hosts a one-way delay corrected by an
 * estimated clock offset can come out below zero by up to the estimate's uncertainty, and a delay measured against
 * a baseline can come out below the baseline; neither is clamped to zero. On one clock the negative part stays
 * empty and this is a plain histogram. Same precision as {@link Latency#newHistogram()} (1%).
 *
 * <p>Not thread-safe: one receiving thread records; copies go to other threads.
 */
public final class SignedHistogram {
    private final Histogram atOrAbove;
    private Histogram below;

    public SignedHistogram() {
        this(Latency.newHistogram(), null);
    }

    /** Wraps the two parts (the second may be null: nothing below zero). */
    public SignedHistogram(Histogram atOrAboveZero, Histogram magnitudesBelowZero) {
        this.atOrAbove = atOrAboveZero;
        this.below = magnitudesBelowZero;
    }

    public void record(long valueNs) {
        if (valueNs >= 0) {
            atOrAbove.recordValue(Math.min(valueNs, Latency.HIGHEST_TRACKABLE_NS));
        } else {
            belowPart().recordValue(valueNs == Long.MIN_VALUE ? Latency.HIGHEST_TRACKABLE_NS
                : Math.min(-valueNs, Latency.HIGHEST_TRACKABLE_NS));
        }
    }

    private void recordWithCount(long valueNs, long count) {
        if (valueNs >= 0) {
            atOrAbove.recordValueWithCount(Math.min(valueNs, Latency.HIGHEST_TRACKABLE_NS), count);
        } else {
            belowPart().recordValueWithCount(Math.min(-valueNs, Latency.HIGHEST_TRACKABLE_NS), count);
        }
    }

    private Histogram belowPart() {
        if (below == null) {
            below = Latency.newHistogram();
        }
        return below;
    }

    public long count() {
        return atOrAbove.getTotalCount() + belowCount();
    }

    /** Values below zero. */
    public long belowCount() {
        return below == null ? 0 : below.getTotalCount();
    }

    public void reset() {
        atOrAbove.reset();
        if (below != null) {
            below.reset();
        }
    }

    public void add(SignedHistogram other) {
        atOrAbove.add(other.atOrAbove);
        if (other.below != null && other.below.getTotalCount() > 0) {
            belowPart().add(other.below);
        }
    }

    public SignedHistogram copy() {
        return new SignedHistogram(atOrAbove.copy(), below == null ? null : below.copy());
    }

    /** Every value moved by {@code deltaNs} (to 1% of the values' own precision). */
    public SignedHistogram shiftedBy(long deltaNs) {
        SignedHistogram out = new SignedHistogram();
        for (HistogramIterationValue v : atOrAbove.recordedValues()) {
            out.recordWithCount(atOrAbove.medianEquivalentValue(v.getValueIteratedTo()) + deltaNs,
                v.getCountAtValueIteratedTo());
        }
        if (below != null) {
            for (HistogramIterationValue v : below.recordedValues()) {
                out.recordWithCount(-below.medianEquivalentValue(v.getValueIteratedTo()) + deltaNs,
                    v.getCountAtValueIteratedTo());
            }
        }
        return out;
    }

    public long min() {
        if (belowCount() > 0) {
            return -below.getMaxValue();
        }
        return atOrAbove.getTotalCount() == 0 ? 0 : atOrAbove.getMinValue();
    }

    public long max() {
        if (atOrAbove.getTotalCount() > 0) {
            return atOrAbove.getMaxValue();
        }
        return belowCount() == 0 ? 0 : -below.getMinValue();
    }

    public double mean() {
        long n = count();
        if (n == 0) {
            return 0;
        }
        double sum = atOrAbove.getTotalCount() == 0 ? 0 : atOrAbove.getMean() * atOrAbove.getTotalCount();
        if (belowCount() > 0) {
            sum -= below.getMean() * below.getTotalCount();
        }
        return sum / n;
    }

    /**
     * The value at or below which {@code percentile} % of all values fall, as HdrHistogram defines it, counting
     * the values below zero first (the largest magnitude is the smallest value).
     */
    public long valueAtPercentile(double percentile) {
        long n = count();
        if (n == 0) {
            return 0;
        }
        long rank = Math.max(1, Math.min(n, (long) Math.ceil(percentile / 100.0 * n)));
        long nBelow = belowCount();
        if (rank <= nBelow) {
            long fromTop = nBelow - rank + 1; // the rank-th smallest value has the fromTop-th smallest magnitude
            return -below.getValueAtPercentile(100.0 * fromTop / nBelow);
        }
        long nAbove = atOrAbove.getTotalCount();
        return atOrAbove.getValueAtPercentile(100.0 * (rank - nBelow) / nAbove);
    }

    /** The values at or above zero, as a plain histogram (for HdrHistogram logs). */
    public Histogram atOrAboveZero() {
        return atOrAbove;
    }

    /** The magnitudes of the values below zero, or null when there were none. */
    public Histogram magnitudesBelowZero() {
        return belowCount() == 0 ? null : below;
    }
}
