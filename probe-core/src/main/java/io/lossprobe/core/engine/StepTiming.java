package io.lossprobe.core.engine;

import io.lossprobe.core.plan.Plan;

/**
 * How long one step warms up, measures and drains: the plan's, or a rate search's short trial's.
 *
 * @param drainNs Tmax for this step
 */
public record StepTiming(long warmupNs, long windowNs, long drainNs) {
    public StepTiming {
        if (warmupNs < 0 || windowNs <= 0 || drainNs < 0) {
            throw new IllegalArgumentException("a step needs a window and no negative warm-up or drain");
        }
    }

    public static StepTiming of(Plan plan) {
        return new StepTiming(plan.warmupNs(), plan.durationNs(), plan.drainNs());
    }
}
