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
    public static final LossBurst NONE = new LossBurst(0, 0, Map.of());

    public LossBurst {
        histogram = Maps.ordered(histogram);
    }

    /** Number of loss runs (the sum of the histogram). */
    public long events() {
        long sum = 0;
        for (long v : histogram.values()) {
            sum += v;
        }
        return sum;
    }

    /** The distribution of all runs of several flows or steps together. */
    public static LossBurst merge(Iterable<LossBurst> parts) {
        java.util.Map<String, Long> counts = new java.util.LinkedHashMap<>();
        java.util.List<String> order = new java.util.ArrayList<>();
        long max = 0;
        double total = 0;
        long events = 0;
        for (LossBurst b : parts) {
            for (java.util.Map.Entry<String, Long> e : b.histogram().entrySet()) {
                if (!counts.containsKey(e.getKey())) {
                    order.add(e.getKey());
                }
                counts.merge(e.getKey(), e.getValue(), Long::sum);
            }
            max = Math.max(max, b.max());
            long n = b.events();
            total += b.mean() * n;
            events += n;
        }
        // Buckets in length order ("1", "2", "3-4", ...): sort by the bucket's lower bound.
        order.sort(java.util.Comparator.comparingLong(LossBurst::lowerBound));
        java.util.Map<String, Long> sorted = new java.util.LinkedHashMap<>();
        for (String k : order) {
            sorted.put(k, counts.get(k));
        }
        return new LossBurst(max, events == 0 ? 0 : total / events, sorted);
    }

    private static long lowerBound(String label) {
        String digits = label.replaceAll("[^0-9].*$", "");
        return digits.isEmpty() ? Long.MAX_VALUE : Long.parseLong(digits);
    }
}
