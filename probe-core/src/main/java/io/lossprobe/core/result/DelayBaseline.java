package io.lossprobe.core.result;

/**
 * What a step's {@code delayOverBaseline} is measured against, between two hosts: each flow's own baseline, the
 * smallest one-way delay its warm-up saw ({@value #WARMUP}), or for a flow whose warm-up saw fewer than
 * {@link #MIN_WARMUP_SAMPLES} messages the smallest delay of its own window ({@value #WINDOW}: then a delay
 * present for the whole window cannot show in the excess, only in the one-way delay).
 *
 * @param source        {@value #WARMUP}, {@value #WINDOW}, or {@value #MIXED} when flows differ
 * @param minSamples    the fewest warm-up samples any flow's baseline came from
 * @param flowsOnWindow flows whose baseline is their window's minimum
 */
public record DelayBaseline(String source, long minSamples, int flowsOnWindow) {
    public static final String WARMUP = "warmup";
    public static final String WINDOW = "window";
    public static final String MIXED = "mixed";
    /** Fewer warm-up delays than this make a weak baseline: the window's own minimum is used instead. */
    public static final long MIN_WARMUP_SAMPLES = 10;
}
