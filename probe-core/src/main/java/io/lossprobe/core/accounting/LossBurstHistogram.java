package io.lossprobe.core.accounting;

import io.lossprobe.core.result.LossBurst;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Lengths of loss runs (RFC 3357 loss periods) in power-of-two buckets: 1, 2, 3-4, 5-8, ... Allocation-free
 * while recording.
 */
public final class LossBurstHistogram {
    static final int BUCKETS = 20;
    private final long[] counts = new long[BUCKETS];
    private long events;
    private long total;
    private long max;

    public void record(long runLength) {
        if (runLength <= 0) {
            return;
        }
        int bucket = Math.min(BUCKETS - 1, 64 - Long.numberOfLeadingZeros(runLength - 1));
        counts[bucket]++;
        events++;
        total += runLength;
        max = Math.max(max, runLength);
    }

    public long events() {
        return events;
    }

    public long total() {
        return total;
    }

    public void reset() {
        java.util.Arrays.fill(counts, 0);
        events = 0;
        total = 0;
        max = 0;
    }

    public void add(LossBurstHistogram other) {
        for (int i = 0; i < BUCKETS; i++) {
            counts[i] += other.counts[i];
        }
        events += other.events;
        total += other.total;
        max = Math.max(max, other.max);
    }

    /** The bucket label for bucket i: "1", "2", "3-4", "5-8", ..., and the last one open-ended. */
    static String label(int i) {
        if (i == 0) {
            return "1";
        }
        if (i == 1) {
            return "2";
        }
        long lo = (1L << (i - 1)) + 1;
        if (i == BUCKETS - 1) {
            return lo + "+";
        }
        return lo + "-" + (1L << i);
    }

    public LossBurst toResult() {
        Map<String, Long> histogram = new LinkedHashMap<>();
        for (int i = 0; i < BUCKETS; i++) {
            if (counts[i] != 0) {
                histogram.put(label(i), counts[i]);
            }
        }
        return new LossBurst(max, events == 0 ? 0.0 : (double) total / events, histogram);
    }
}
