package io.lossprobe.analysis;

import java.util.Locale;
import java.util.Map;

/**
 * Retransmits and NAKs from result files written before transports declared their counters (no {@code counters}
 * in the file): found by name, as those versions' reports did, so a nightly history keeps its trend lines.
 */
final class LegacyCounters {
    private LegacyCounters() {
    }

    /** Counters whose name contains "retrans" (not byte counts or overflows); NaN when there are none. */
    static double retransmits(Map<String, Long> counters) {
        return sumMatching(counters, "retrans", null);
    }

    /**
     * Counters whose name contains "nak"; where some of them count NAKs sent, only those, so a NAK sent and received
     * on the same host is not counted twice. NaN when there are none.
     */
    static double naks(Map<String, Long> counters) {
        double sentOnly = sumMatching(counters, "nak", "sent");
        return Double.isNaN(sentOnly) ? sumMatching(counters, "nak", null) : sentOnly;
    }

    private static double sumMatching(Map<String, Long> counters, String needle, String alsoNeeded) {
        double sum = 0;
        boolean any = false;
        for (Map.Entry<String, Long> e : counters.entrySet()) {
            String key = e.getKey().toLowerCase(Locale.ROOT);
            boolean counted = !key.contains("byte") && !key.contains("overflow");
            if (key.contains(needle) && counted && (alsoNeeded == null || key.contains(alsoNeeded))
                && e.getValue() != null) {
                sum += e.getValue();
                any = true;
            }
        }
        return any ? sum : Double.NaN;
    }
}
