package io.lossprobe.core.result;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Percentiles over values on both sides of zero, against the exact order statistics of the same values. */
class SignedHistogramTest {
    @Test
    void percentilesMeanMinAndMaxMatchTheSortedValuesWithinThePrecision() {
        Random r = new Random(7);
        for (int trial = 0; trial < 50; trial++) {
            int n = 1 + r.nextInt(2000);
            long shift = r.nextInt(3) == 0 ? 0 : r.nextInt(200_000) - 100_000;
            long[] values = new long[n];
            SignedHistogram h = new SignedHistogram();
            double sum = 0;
            for (int i = 0; i < n; i++) {
                values[i] = (long) (r.nextGaussian() * 50_000) + shift;
                h.record(values[i]);
                sum += values[i];
            }
            Arrays.sort(values);
            assertThat(h.count()).isEqualTo(n);
            assertThat(h.min()).isCloseTo(values[0], within(Math.abs(values[0]) / 100 + 1));
            assertThat(h.max()).isCloseTo(values[n - 1], within(Math.abs(values[n - 1]) / 100 + 1));
            assertThat(h.mean()).isCloseTo(sum / n, within(Math.abs(sum / n) / 50 + 1_000));
            for (double p : new double[] {1, 10, 50, 90, 99, 99.9}) {
                long exact = values[(int) Math.max(0, Math.ceil(p / 100 * n) - 1)];
                assertThat(h.valueAtPercentile(p)).as("p%s of %d values", p, n)
                    .isCloseTo(exact, within(Math.abs(exact) / 100 + 1));
            }
        }
    }

    @Test
    void shiftingMovesEveryValueAndCanCrossZero() {
        SignedHistogram h = new SignedHistogram();
        for (long v : new long[] {10_000, 20_000, 30_000}) {
            h.record(v);
        }
        SignedHistogram moved = h.shiftedBy(-25_000);
        assertThat(moved.count()).isEqualTo(3);
        assertThat(moved.belowCount()).isEqualTo(2);
        assertThat(moved.min()).isCloseTo(-15_000, within(200L));
        assertThat(moved.max()).isCloseTo(5_000, within(200L));
        assertThat(moved.valueAtPercentile(50)).isCloseTo(-5_000, within(200L));
    }

    @Test
    void anEmptyOneHasNoValues() {
        SignedHistogram h = new SignedHistogram();
        assertThat(h.count()).isZero();
        assertThat(Latency.of(h, null, null).count()).isZero();
        assertThat(h.magnitudesBelowZero()).isNull();
    }
}
