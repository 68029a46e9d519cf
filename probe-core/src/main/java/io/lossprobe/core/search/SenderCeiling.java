package io.lossprobe.core.search;

import io.lossprobe.core.result.SenderLimit;
import io.lossprobe.core.search.RateSearch.Measured;

/**
 * The lowest rate the sender could not carry in a search, what it achieved there and why it fell short. The search
 * never goes above it.
 */
final class SenderCeiling {
    /** The lowest rate the sender could not carry; Long.MAX_VALUE: none seen. */
    private long rate = Long.MAX_VALUE;
    /** What the sender achieved at {@link #rate}: the next try goes just under it. */
    private double speed = Double.MAX_VALUE;
    /** Why the sender fell short at {@link #rate}. */
    private SenderLimit limit;

    /** The ceiling; Long.MAX_VALUE while none is seen. */
    long rate() {
        return rate;
    }

    SenderLimit limit() {
        return limit;
    }

    /** The sender fell short at {@code m}: its rate is the ceiling when it is the lowest yet. */
    void fellShortAt(Measured m) {
        if (m.rate() < rate) {
            rate = m.rate();
            speed = m.achievedSendRate();
            limit = m.senderLimit();
        }
    }

    /**
     * Just under what the sender achieved where it fell short, when that is far enough under the rate it fell short
     * at (by the search's {@code precision}) to be worth a trial and above {@code lower}; else {@code lower}
     * (nothing to try there).
     */
    long underSpeed(long lower, double precision) {
        if (speed == Double.MAX_VALUE) {
            return lower;
        }
        long r = (long) Math.floor(speed * (1 - precision / 2));
        return r > lower && r < (long) Math.floor(rate / (1 + precision / 2)) ? r : lower;
    }
}
