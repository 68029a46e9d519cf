package io.lossprobe.core.search;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/** The rates a search tries: between two bounds, and rounded so that people can read them. */
final class RateSteps {
    private RateSteps() {
    }

    /** {@code cap} + 1, where there is a cap. */
    static long plusOne(long cap) {
        return cap == Long.MAX_VALUE ? cap : cap + 1;
    }

    /** The geometric middle of (lower, upper), rounded where that keeps it strictly inside. */
    static long inside(long lower, long upper) {
        long mid = (long) Math.floor(Math.sqrt((double) lower * upper));
        if (mid <= lower) {
            mid = lower + 1;
        }
        return round(mid, lower, upper);
    }

    /** {@code r} to three significant digits when that stays strictly between the two limits, else as it is. */
    static long round(long r, long above, long below) {
        long rounded = new BigDecimal(r).round(new MathContext(3, RoundingMode.HALF_EVEN)).longValue();
        return rounded > above && rounded < below ? rounded : r;
    }
}
