package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.result.DelayBaseline;
import io.lossprobe.core.result.SignedHistogram;

/**
 * Between hosts, each flow's delay in excess of its own baseline: the smallest delay its warm-up saw, or with too
 * few warm-up messages the smallest of its window. Independent of the clock estimate (a constant offset cancels),
 * but blind to a delay present all along.
 */
final class DelayBaselines {
    private final SignedHistogram excess = new SignedHistogram();
    private long minSamples = Long.MAX_VALUE;
    private int flowsOnWindow;
    private int flows;

    /** Adds one flow; returns its baseline (ns), or null when it received nothing. */
    Long add(FlowReceiver.Summary s) {
        if (s.delay().count() == 0) {
            return null;
        }
        flows++;
        long baseline;
        if (s.warmupDelays() >= DelayBaseline.MIN_WARMUP_SAMPLES) {
            baseline = s.warmupMinDelayNs();
            minSamples = Math.min(minSamples, s.warmupDelays());
        } else {
            baseline = s.delay().min();
            flowsOnWindow++;
            minSamples = Math.min(minSamples, s.warmupDelays());
        }
        excess.add(s.delay().shiftedBy(-baseline));
        return baseline;
    }

    SignedHistogram excess() {
        return excess;
    }

    int flowsOnWindow() {
        return flowsOnWindow;
    }

    DelayBaseline description() {
        String source = flowsOnWindow == 0 ? DelayBaseline.WARMUP
            : flowsOnWindow == flows ? DelayBaseline.WINDOW : DelayBaseline.MIXED;
        return new DelayBaseline(source, minSamples == Long.MAX_VALUE ? 0 : minSamples, flowsOnWindow);
    }
}
