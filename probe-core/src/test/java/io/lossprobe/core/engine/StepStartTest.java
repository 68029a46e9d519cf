package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.accounting.SequenceTracker;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What every side of a step is told as it begins. */
class StepStartTest {
    private static final long MS = 1_000_000L;
    private final Plan plan = new Plan(List.of("udp"), 3, 40000, List.of(Level.of(1000), Level.MAX), 500 * MS,
        100 * MS, 200 * MS, 64, "127.0.0.1");

    @Test
    void aLevelIsSplitOverTheFlowsWithTheirTrackingWindowsAndAFreshLedger() {
        StepStart start = StepStart.of(plan, 2, Level.of(1000), StepTiming.of(plan), SendFilter.NONE, -7);
        assertThat(start.flowRates()).containsExactly(334, 333, 333);
        assertThat(start.windowBits()).containsExactly(SequenceTracker.windowsFor(plan, Level.of(1000)));
        assertThat(start.failures()).hasSize(3).allSatisfy(f -> assertThat(f.size()).isZero());
        assertThat(start.failures()[0]).isNotSameAs(start.failures()[1]);
        assertThat(start).extracting(StepStart::step, StepStart::warmupNs, StepStart::windowNs,
            StepStart::clockOffsetNs, StepStart::direction).containsExactly(2, 100 * MS, 500 * MS, -7L,
            StepStart.Direction.FORWARD);
        assertThat(start.hasTimingOf(plan)).isTrue();
    }

    @Test
    void maxSendsEveryFlowAsFastAsItGoes() {
        StepStart start = StepStart.of(plan, 0, Level.MAX, StepTiming.of(plan), SendFilter.NONE, 0);
        assertThat(start.flowRates()).containsExactly(0, 0, 0);
    }

    @Test
    void aSearchTrialsTimingIsNotThePlans() {
        StepStart trial = StepStart.of(plan, 0, Level.of(1000), new StepTiming(20 * MS, 100 * MS, 200 * MS),
            SendFilter.NONE, 0);
        assertThat(trial.hasTimingOf(plan)).isFalse();
    }

    @Test
    void everyFlowNeedsARateAWindowAndALedger() {
        assertThatThrownBy(() -> new StepStart(0, Level.of(1000), new long[2], new int[3], SendFilter.NONE, 0,
            MS, FailedRanges.perFlow(3), 0, StepStart.Direction.FORWARD))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new StepStart(0, Level.of(1000), new long[3], new int[3], SendFilter.NONE, 0,
            MS, FailedRanges.perFlow(2), 0, StepStart.Direction.FORWARD))
            .isInstanceOf(IllegalArgumentException.class);
    }
}
