package io.lossprobe.core.plan;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * One step's target: a message rate over all flows, or {@link #MAX} (send as fast as the transport accepts).
 *
 * @param ratePerSecond messages per second over all flows; 0 means "max"
 */
public record Level(long ratePerSecond) {
    public static final Level MAX = new Level(0);

    public Level {
        if (ratePerSecond < 0) {
            throw new IllegalArgumentException("level must be positive: " + ratePerSecond);
        }
    }

    public static Level of(long ratePerSecond) {
        if (ratePerSecond <= 0) {
            throw new IllegalArgumentException("level must be positive: " + ratePerSecond);
        }
        return new Level(ratePerSecond);
    }

    /** Parses {@code 30k}, {@code 1M}, {@code 2.5M}, {@code 100000} or {@code max}. */
    @JsonCreator
    public static Level parse(String text) {
        if (text != null && text.trim().equalsIgnoreCase("max")) {
            return MAX;
        }
        return of(Units.parseDecimal(text, "level"));
    }

    public boolean isMax() {
        return ratePerSecond == 0;
    }

    @JsonValue
    @Override
    public String toString() {
        return isMax() ? "max" : Units.formatRate(ratePerSecond);
    }
}
