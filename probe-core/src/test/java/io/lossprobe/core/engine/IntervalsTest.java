package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.IntervalResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.testing.MemoryTransport;
import static io.lossprobe.core.testing.IntervalAssertions.assertIntervalsAddUp;
import io.lossprobe.core.testing.VirtualTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Per-interval counts on {@link VirtualTime} and the {@link MemoryTransport}: every figure exact, each message in
 * the interval of its intended send time, the intervals adding up to the step.
 */
@Timeout(30)
class IntervalsTest {
    private static final long MS = 1_000_000L;
    private final VirtualTime time = new VirtualTime(7_000 * MS);
    private final MemoryTransport transport = new MemoryTransport(time);
    private final List<SignedHistograms> histograms = new ArrayList<>();

    record SignedHistograms(int step, io.lossprobe.core.result.SignedHistogram[] intervals, long intervalNs,
                            long windowNs) {
    }

    private static Plan plan(int ports, long rate, long windowMs, long warmupMs, long intervalMs, int... sizes) {
        List<Integer> sizeList = new ArrayList<>();
        for (int s : sizes) {
            sizeList.add(s);
        }
        return new Plan(List.of(MemoryTransport.NAME), ports, 40000, List.of(Level.of(rate)), windowMs * MS,
            warmupMs * MS, 200 * MS, sizes.length == 0 ? 64 : sizes[0], "127.0.0.1", Plan.STREAM, 0, Map.of(),
            sizeList.isEmpty() ? null : sizeList, null, intervalMs * MS);
    }

    private RunResult run(Plan plan) throws Exception {
        RunListener listener = new RunListener() {
            @Override
            public void stepIntervalHistograms(String t, int step, String kind,
                                               io.lossprobe.core.result.SignedHistogram[] intervals,
                                               io.lossprobe.core.result.SignedHistogram whole, long startEpochMs,
                                               long intervalNs, long windowNs) {
                histograms.add(new SignedHistograms(step, intervals, intervalNs, windowNs));
            }
        };
        return new RunEngine(plan, Map.of(MemoryTransport.NAME, transport), Map.of(), listener, StepHooks.NONE,
            ReceiveSideFactory.LOCAL, SendSideFactory.local("127.0.0.1", time), 77).withClock(time).run();
    }

    @Test
    void eachLossLandsInTheIntervalThatWasMeantToSendIt() throws Exception {
        // 1,000/s on one flow for 1 s in 250 ms intervals: message k is intended at k ms, so 0-249 are the first
        // interval's, 250-499 the second's. Drop 10 and 260-262, fail 600-601 after accept, refuse one at 900.
        transport.drop(0, 0, 10).drop(0, 0, 260).drop(0, 0, 261).drop(0, 0, 262);
        transport.failAfterAccept(0, 0, 600, 2);
        transport.duplicate(0, 0, 700, 1 * MS);
        transport.refuse(0, 0, 900, 1);
        RunResult result = run(plan(1, 1000, 1000, 100, 250));
        StepResult step = result.steps().get(0);
        List<IntervalResult> iv = step.intervals();
        assertThat(iv).hasSize(4);
        assertThat(iv).extracting(IntervalResult::startNs).containsExactly(0L, 250 * MS, 500 * MS, 750 * MS);
        assertThat(iv.get(3).endNs()).isEqualTo(1000 * MS);
        assertThat(iv).extracting(IntervalResult::scheduled).containsExactly(250L, 250L, 250L, 250L);
        assertThat(iv).extracting(IntervalResult::lost).containsExactly(1L, 3L, 0L, 0L);
        assertThat(iv).extracting(IntervalResult::sendFailed).containsExactly(0L, 0L, 2L, 1L);
        assertThat(iv).extracting(IntervalResult::duplicates).containsExactly(0L, 0L, 1L, 0L);
        assertThat(iv.get(0).received()).isEqualTo(249);
        assertThat(iv.get(0).achievedReceiveRate()).isEqualTo(996.0);
        assertIntervalsAddUp(step);
        assertThat(histograms).hasSize(1);
        assertThat(histograms.get(0).intervals()).hasSize(4);
        assertThat(histograms.get(0).intervals()[1].count()).isEqualTo(247);
    }

    @Test
    void aWindowThatIsNoMultipleOfTheIntervalEndsWithAShortOne() throws Exception {
        RunResult result = run(plan(3, 3000, 700, 0, 300));
        StepResult step = result.steps().get(0);
        assertThat(step.intervals()).extracting(IntervalResult::endNs).containsExactly(300 * MS, 600 * MS, 700 * MS);
        assertThat(step.intervals()).extracting(IntervalResult::scheduled).containsExactly(900L, 900L, 300L);
        assertIntervalsAddUp(step);
    }

    @Test
    void staggeredFlowsAreScheduledByTheirOwnOffsets() throws Exception {
        // 4 flows at 1,000/s in all (250/s each), staggered 1 ms apart: flow 3's message k is intended at 3 + 4k ms.
        // Counted from the window's start instead of its own, an interval was given one message too few: sent 1
        // more than scheduled, "behind -1" (the lab's shaper test saw it once the default mode staggered).
        transport.pacing(MemoryTransport.PACING.withStaggerFlows(true));
        RunResult result = run(plan(4, 1000, 1000, 0, 250));
        StepResult step = result.steps().get(0);
        assertThat(step.intervals()).extracting(IntervalResult::scheduled).containsExactly(250L, 250L, 250L, 250L);
        assertThat(step.intervals()).extracting(IntervalResult::behind).containsOnly(0L);
        assertIntervalsAddUp(step);
    }

    @Test
    void eachSizeIsAPassOfItsOwnWithStepsNumberedOn() throws Exception {
        RunResult result = run(plan(2, 1000, 500, 0, 100, 64, 200));
        assertThat(result.steps()).hasSize(2);
        assertThat(result.steps()).extracting(StepResult::messageSize).containsExactly(64, 200);
        assertThat(result.steps()).extracting(StepResult::step).containsExactly(0, 1);
        for (StepResult s : result.steps()) {
            assertThat(s.counts().received()).isEqualTo(500);
            assertIntervalsAddUp(s);
        }
    }

    @Test
    void anOnOffStepSchedulesEachIntervalByThePatternNotTheAverage() throws Exception {
        // onoff:250ms/250ms at 1,000/s: each 500 ms period's 500 messages are sent in its first 250 ms, so the
        // intervals (rebuilt from the pattern, not the average rate) are 500, 0, 500, 0, and none is behind.
        RunResult result = run(plan(1, 1000, 1000, 100, 250).withPattern("onoff:250ms/250ms", 0));
        StepResult step = result.steps().get(0);
        assertThat(step.intervals()).extracting(IntervalResult::scheduled).containsExactly(500L, 0L, 500L, 0L);
        assertThat(step.intervals()).extracting(IntervalResult::sent).containsExactly(500L, 0L, 500L, 0L);
        assertThat(step.intervals()).extracting(IntervalResult::behind).containsOnly(0L);
        assertThat(step.counts().scheduled()).isEqualTo(1000);
        assertThat(step.counts().sent()).isEqualTo(1000);
        assertThat(step.counts().received()).isEqualTo(1000);
        assertIntervalsAddUp(step);
    }

    @Test
    void aPoissonStepsIntervalsAreRebuiltFromTheSameDrawsOnStaggeredFlows() throws Exception {
        // Each interval's scheduled count comes from the flow's schedule rebuilt after the step: with other draws
        // than the sender's, some interval would show a message behind (or -1).
        transport.pacing(MemoryTransport.PACING.withStaggerFlows(true));
        RunResult result = run(plan(3, 3000, 1000, 100, 100).withPattern("poisson", 1234));
        StepResult step = result.steps().get(0);
        List<Long> scheduled = step.intervals().stream().map(IntervalResult::scheduled).toList();
        assertThat(scheduled.stream().mapToLong(Long::longValue).sum()).isEqualTo(3000);
        assertThat(scheduled.stream().distinct().count()).as("random, not 300 each: %s", scheduled).isGreaterThan(5);
        assertThat(step.intervals()).extracting(IntervalResult::behind).containsOnly(0L);
        assertThat(step.counts().sent()).isEqualTo(3000);
        assertIntervalsAddUp(step);
        assertThat(result.plan().pattern()).isEqualTo("poisson");
        assertThat(result.plan().seed()).isEqualTo(1234);
    }
}
