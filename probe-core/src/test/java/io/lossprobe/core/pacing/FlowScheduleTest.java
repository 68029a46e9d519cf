package io.lossprobe.core.pacing;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.plan.Plan;
import org.junit.jupiter.api.Test;

class FlowScheduleTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void aLevelSplitOverFlowsAddsUpExactly() {
        for (long total : new long[] {100_000, 30_000, 1_000_000, 2_500_000, 49, 100_003}) {
            long sum = 0;
            for (int f = 0; f < 48; f++) {
                long r = Plan.flowRate(total, 48, f);
                assertThat(r).isBetween(total / 48, total / 48 + 1);
                sum += r;
            }
            assertThat(sum).as("total %d", total).isEqualTo(total);
        }
    }

    @Test
    void scheduledIsRateTimesDurationForWholeSeconds() {
        assertThat(FlowSchedule.constant(0, 5 * SECOND, 2084).scheduled()).isEqualTo(5 * 2084);
        assertThat(FlowSchedule.constant(0, SECOND / 2, 1000).scheduled()).isEqualTo(500);
        assertThat(FlowSchedule.constant(0, 86_400 * SECOND, 5_000_000).scheduled()).isEqualTo(86_400L * 5_000_000);
    }

    @Test
    void messagesFallDueAtTheirIntendedTimesAndNeverBefore() {
        FlowSchedule s = FlowSchedule.constant(1_000, SECOND, 3);
        assertThat(s.dueBy(999)).isZero();
        assertThat(s.dueBy(1_000)).isEqualTo(1);
        assertThat(s.intendedTimeNs(1)).isEqualTo(1_000 + 333_333_333);
        assertThat(s.dueBy(1_000 + 333_333_332)).isEqualTo(1);
        assertThat(s.dueBy(1_000 + 333_333_334)).isEqualTo(2);
        assertThat(s.dueBy(10 * SECOND)).isEqualTo(3);
        for (long k = 0; k < 3; k++) {
            assertThat(s.dueBy(s.intendedTimeNs(k))).isGreaterThan(k);
        }
    }

    @Test
    void unlimitedScheduleHasEverythingDue() {
        FlowSchedule s = FlowSchedule.constant(0, SECOND, 0);
        assertThat(s.unlimited()).isTrue();
        assertThat(s.dueBy(0)).isEqualTo(Long.MAX_VALUE);
    }
}
