package io.lossprobe.core.pacing;

import static io.lossprobe.core.testing.GoodnessOfFit.ksExponential;
import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.plan.SendPattern;
import java.math.BigInteger;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every pattern's schedule against the constant one: the same count, times that only move, and {@code dueBy} and
 * {@code intendedTimeNs} telling the same story for every message.
 */
class PatternScheduleTest {
    private static final long MS = 1_000_000L;
    private static final long SECOND = 1_000_000_000L;
    private static final long START = 12_345_678_901L;
    private static final long KEY = FlowSchedule.key(20_261_202L, 3, 1, FlowSchedule.WINDOW);

    private static FlowSchedule of(String pattern, long durationNs, long rate) {
        return FlowSchedule.of(SendPattern.parse(pattern), START, durationNs, rate, KEY);
    }

    /** Message k's intended time, for every k of the schedule, from a schedule of its own. */
    private static long[] times(String pattern, long durationNs, long rate) {
        FlowSchedule s = of(pattern, durationNs, rate);
        long[] t = new long[Math.toIntExact(s.scheduled())];
        for (int k = 0; k < t.length; k++) {
            t[k] = s.intendedTimeNs(k);
        }
        return t;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"constant", "burst:1", "burst:7", "burst:64", "burst:100000", "onoff:100ms/100ms",
        "onoff:3ms/7ms", "onoff:1ms/0", "onoff:333us/1s", "poisson"})
    void everyPatternSchedulesTheConstantCountAndKeepsItsTimesInsideThePhase(String pattern) {
        long[][] cases = {{SECOND, 1000}, {SECOND / 2, 2084}, {1_234_567_891L, 7919}, {3 * SECOND, 3}, {SECOND, 1},
            {250 * MS, 100_000}};
        for (long[] c : cases) {
            long duration = c[0];
            long rate = c[1];
            FlowSchedule s = of(pattern, duration, rate);
            long expected = FlowSchedule.constant(START, duration, rate).scheduled();
            assertThat(s.scheduled()).as("%s over %d ns at %d/s", pattern, duration, rate).isEqualTo(expected);
            assertThat(s.dueBy(START + duration - 1)).as("all due inside the phase").isEqualTo(expected);
            assertThat(s.dueBy(START + 100 * duration)).isEqualTo(expected);
            assertThat(s.dueBy(START - 1)).isZero();
            long[] t = times(pattern, duration, rate);
            for (int k = 0; k < t.length; k++) {
                assertThat(t[k]).as("%s: message %d", pattern, k).isBetween(START, START + duration - 1);
                if (k > 0) {
                    assertThat(t[k]).as("%s: non-decreasing at %d", pattern, k).isGreaterThanOrEqualTo(t[k - 1]);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"constant", "burst:7", "burst:64", "onoff:100ms/100ms", "onoff:3ms/7ms",
        "onoff:333us/1s", "poisson"})
    void dueByCountsTheMessagesIntendedAtOrBeforeEachTime(String pattern) {
        long duration = 1_234_567_891L;
        long rate = 20_011;
        long[] t = times(pattern, duration, rate);
        // A second schedule built from the same arguments (as the interval counts build it) answers dueBy.
        FlowSchedule walk = of(pattern, duration, rate);
        for (int k = 0; k < t.length; k++) {
            long dueAt = walk.dueBy(t[k]);
            assertThat(dueAt).as("%s: due by message %d's time", pattern, k).isEqualTo(upperBound(t, t[k]));
            assertThat(dueAt).isGreaterThan(k);
        }
        // And at times in any order, just before, at and after intended times and between them.
        FlowSchedule random = of(pattern, duration, rate);
        SplittableRandom r = new SplittableRandom(29);
        for (int i = 0; i < 3000; i++) {
            long at = i % 3 == 0 ? t[r.nextInt(t.length)] + r.nextInt(3) - 1 : START - 10 + r.nextLong(duration + 20);
            assertThat(random.dueBy(at)).as("%s: dueBy(%d)", pattern, at).isEqualTo(upperBound(t, at));
        }
        // intendedTimeNs in any order agrees with the walk in order.
        FlowSchedule jumps = of(pattern, duration, rate);
        for (int i = 0; i < 2000; i++) {
            int k = r.nextInt(t.length);
            assertThat(jumps.intendedTimeNs(k)).isEqualTo(t[k]);
        }
    }

    /** How many of the sorted {@code t} are at most {@code at}. */
    private static long upperBound(long[] t, long at) {
        int lo = 0;
        int hi = t.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (t[mid] <= at) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    @Test
    void theConstantPatternIsTheScheduleOfBeforeBitForBit() {
        SplittableRandom r = new SplittableRandom(7);
        for (int i = 0; i < 20_000; i++) {
            long rate = 1 + r.nextLong(5_000_000);
            long duration = 1 + r.nextLong(100 * SECOND);
            FlowSchedule s = FlowSchedule.of(SendPattern.CONSTANT, START, duration, rate, r.nextLong());
            assertThat(s).isInstanceOf(FlowSchedule.Constant.class);
            long k = r.nextLong(Math.max(1, s.scheduled()));
            long floor = BigInteger.valueOf(k).multiply(BigInteger.valueOf(SECOND))
                .divide(BigInteger.valueOf(rate)).longValueExact();
            assertThat(s.intendedTimeNs(k)).isEqualTo(START + floor);
            long scheduled = BigInteger.valueOf(duration).multiply(BigInteger.valueOf(rate))
                .divide(BigInteger.valueOf(SECOND)).longValueExact();
            assertThat(s.scheduled()).isEqualTo(scheduled);
        }
        // Every pattern at "max" is the unlimited schedule.
        assertThat(of("burst:64", SECOND, 0).dueBy(START)).isEqualTo(Long.MAX_VALUE);
        assertThat(of("poisson", SECOND, 0).unlimited()).isTrue();
    }

    @Test
    void aBurstIsGroupsOfNDueAtTheConstantTimeOfTheirFirstMessage() {
        // 6,400/s in bursts of 64: a burst every 10 ms exactly (burst:64/10ms is this very schedule).
        FlowSchedule burst = of("burst:64/10ms", SECOND, 6_400);
        FlowSchedule constant = FlowSchedule.constant(START, SECOND, 6_400);
        assertThat(burst.scheduled()).isEqualTo(6_400);
        for (long k = 0; k < 6_400; k++) {
            assertThat(burst.intendedTimeNs(k)).isEqualTo(START + (k / 64) * 10 * MS);
            assertThat(burst.intendedTimeNs(k)).isEqualTo(constant.intendedTimeNs(k - k % 64));
        }
        assertThat(burst.dueBy(START)).isEqualTo(64);
        assertThat(burst.dueBy(START + 10 * MS - 1)).isEqualTo(64);
        assertThat(burst.dueBy(START + 10 * MS)).isEqualTo(128);
        // A last group cut short by the count: 1,000 at bursts of 64 ends with 1000 - 15 * 64 = 40.
        FlowSchedule cut = of("burst:64", SECOND, 1_000);
        assertThat(cut.dueBy(cut.intendedTimeNs(960))).isEqualTo(1_000);
        assertThat(cut.dueBy(cut.intendedTimeNs(960) - 1)).isEqualTo(960);
        assertThat(cut.intendedTimeNs(999)).isEqualTo(cut.intendedTimeNs(960));
    }

    @Test
    void onOffSendsEachPeriodsShareInsideItsOnPart() {
        long on = 30 * MS;
        long period = 100 * MS; // onoff:30ms/70ms
        long duration = 1_050 * MS; // ten periods and a half
        long rate = 12_347;
        long[] t = times("onoff:30ms/70ms", duration, rate);
        FlowSchedule constant = FlowSchedule.constant(START, duration, rate);
        long[] perPeriod = new long[11];
        for (long k = 0; k < t.length; k++) {
            long offset = t[(int) k] - START;
            assertThat(offset % period).as("message %d inside ON", k).isLessThan(on);
            perPeriod[(int) (offset / period)]++;
            // ... in the period the constant schedule put it in.
            assertThat(offset / period).isEqualTo((constant.intendedTimeNs(k) - START) / period);
        }
        for (int p = 0; p < perPeriod.length; p++) {
            long from = constant.dueBy(START + p * period - 1);
            long to = constant.dueBy(START + Math.min(duration, (p + 1) * period) - 1);
            assertThat(perPeriod[p]).as("period %d", p).isEqualTo(to - from);
        }
        // Inside ON the period's share goes at the rate that fits: P / ON times the level (12,347 x 10/3 per s).
        long inFirst = perPeriod[0];
        assertThat(t[(int) inFirst - 1] - START).isLessThan(on);
        assertThat(inFirst).isBetween(1234L, 1235L);
    }

    @Test
    void onOffTimesStayExactForLongPeriodsWhereTheProductOverflows() {
        // u * ON overflows 64 bits past 3 s x 3 s: the squeeze falls back to exact 128-bit arithmetic.
        long on = 7 * 3_600 * SECOND;
        long off = 5 * 3_600 * SECOND;
        SendPattern p = new SendPattern(SendPattern.Kind.ONOFF, 0, 0, on, off);
        FlowSchedule s = FlowSchedule.of(p, 0, 24 * 3_600 * SECOND, 1_000, 0);
        long k = 43_199_999; // constant offset 43,199.999 s: the last message of the first 12 h period
        BigInteger u = BigInteger.valueOf(s.constantOffset(k));
        long expected = u.multiply(BigInteger.valueOf(on)).divide(BigInteger.valueOf(on + off)).longValueExact();
        assertThat(s.intendedTimeNs(k)).isEqualTo(expected).isLessThan(on);
        assertThat(s.dueBy(expected)).isEqualTo(k + 1);
        assertThat(s.dueBy(expected - 1)).isEqualTo(k);
    }

    @Test
    void poissonGapsAreExponentialAtThePlannedRate() {
        long rate = 20_000;
        for (int step = 0; step < 3; step++) {
            FlowSchedule s = FlowSchedule.of(SendPattern.parse("poisson"), START, 5 * SECOND, rate,
                FlowSchedule.key(42, step, 0, FlowSchedule.WINDOW));
            double d = ksExponential(gaps(s), rate);
            int n = (int) s.scheduled() - 1;
            assertThat(d).as("KS statistic, step %d, n %d", step, n).isLessThan(1.63 / Math.sqrt(n));
        }
    }

    @Test
    void theGoodnessOfFitCheckFailsForSchedulesThatAreNotPoisson() {
        long rate = 20_000;
        for (String pattern : new String[] {"constant", "burst:64", "onoff:50ms/50ms"}) {
            FlowSchedule s = of(pattern, 5 * SECOND, rate);
            double d = ksExponential(gaps(s), rate);
            assertThat(d).as(pattern).isGreaterThan(1.63 / Math.sqrt(s.scheduled() - 1));
        }
        // Poisson at the wrong rate fails too: the check tests the planned rate, not just the shape.
        FlowSchedule s = of("poisson", 5 * SECOND, rate);
        assertThat(ksExponential(gaps(s), rate * 1.05)).isGreaterThan(1.63 / Math.sqrt(s.scheduled() - 1));
    }

    @Test
    void poissonTimesFollowFromTheKeyAlone() {
        long[] a = times("poisson", SECOND, 5_000);
        long[] b = times("poisson", SECOND, 5_000);
        assertThat(a).isEqualTo(b);
        FlowSchedule other = FlowSchedule.of(SendPattern.parse("poisson"), START, SECOND, 5_000,
            FlowSchedule.key(20_261_202L, 3, 2, FlowSchedule.WINDOW));
        long same = 0;
        for (int k = 0; k < a.length; k++) {
            same += other.intendedTimeNs(k) == a[k] ? 1 : 0;
        }
        assertThat(same).as("another flow's draws").isLessThan(a.length / 10);
        assertThat(FlowSchedule.key(1, 0, 0, FlowSchedule.WARMUP)).isNotEqualTo(FlowSchedule.key(1, 0, 0,
            FlowSchedule.WINDOW)).isNotEqualTo(FlowSchedule.key(1, 1, 0, FlowSchedule.WARMUP))
            .isNotEqualTo(FlowSchedule.key(2, 0, 0, FlowSchedule.WARMUP));
    }

    private static double[] gaps(FlowSchedule s) {
        int n = (int) s.scheduled();
        double[] g = new double[n - 1];
        long before = s.intendedTimeNs(0);
        for (int k = 1; k < n; k++) {
            long t = s.intendedTimeNs(k);
            g[k - 1] = (t - before) / 1e9;
            before = t;
        }
        return g;
    }
}
