package io.lossprobe.core.result;

import java.util.Map;

/**
 * Lengths of loss runs in one flow or step.
 *
 * @param max       longest run of consecutive lost sequence numbers
 * @param mean      mean run length (0 when nothing was lost)
 * @param histogram run counts by length bucket ("1", "2", "3-4", "5-8", ...); empty buckets left out
 */
public record LossBurst(long max, double mean, Map<String, Long> histogram) {
    public LossBurst {
        histogram = Maps.ordered(histogram);
    }
}
