package io.lossprobe.core.testing;

import java.util.Arrays;

/** Goodness-of-fit statistics for the send patterns' tests. */
public final class GoodnessOfFit {
    /** Kolmogorov-Smirnov's critical value at a 1 % level, times the square root of the sample size. */
    public static final double KS_CRITICAL_1_PERCENT = 1.628;

    private GoodnessOfFit() {
    }

    /** The one-sample Kolmogorov-Smirnov statistic of {@code x} against the exponential of {@code rate}. */
    public static double ksExponential(double[] x, double rate) {
        double[] sorted = x.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        double d = 0;
        for (int i = 0; i < n; i++) {
            double f = -Math.expm1(-rate * sorted[i]);
            d = Math.max(d, Math.max((i + 1.0) / n - f, f - (double) i / n));
        }
        return d;
    }

    /** The critical distance at a 1 % level for {@code n} samples. */
    public static double ksCritical(int n) {
        return KS_CRITICAL_1_PERCENT / Math.sqrt(n);
    }
}
