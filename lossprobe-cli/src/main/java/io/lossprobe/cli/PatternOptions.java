package io.lossprobe.cli;

import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.plan.SendPattern;
import java.security.SecureRandom;
import picocli.CommandLine.Option;

/** {@code run}'s send pattern ({@code --pattern}) and the seed a random one draws from ({@code --seed}). */
final class PatternOptions {
    @Option(names = "--pattern", paramLabel = "PATTERN", completionCandidates = CompletionValues.Patterns.class,
        description = "How each step spreads its messages over time, the level staying the average rate and the "
            + "count that of constant: constant, burst:N (N messages back to back), burst:N/INTERVAL (the same, "
            + "checked to be every flow's rate), poisson (random times, exponential gaps, from --seed) or "
            + "onoff:ON/OFF (each period's messages sent inside ON). See docs/patterns.md. Default: constant.")
    String pattern;

    @Option(names = "--seed", paramLabel = "N",
        description = "What a random pattern (poisson) draws from; the same seed sends at the same times. "
            + "Recorded in the results. Default: chosen at random for poisson, else 0.")
    Long seed;

    /**
     * {@code plan} with the pattern and seed.
     *
     * @throws IllegalArgumentException with one line for a bad pattern or one the levels cannot keep
     */
    Plan apply(Plan plan) {
        return plan.withPattern(pattern, seed());
    }

    /** {@code --seed}, or a random one for a random pattern (recorded, so the run can be sent again), else 0. */
    private long seed() {
        if (seed != null) {
            return seed;
        }
        return SendPattern.parse(pattern).random() ? new SecureRandom().nextLong() : 0;
    }
}
