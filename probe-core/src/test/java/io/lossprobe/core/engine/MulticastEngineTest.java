package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.ReceiverResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.testing.MemoryTransport;
import io.lossprobe.core.testing.VirtualTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A multicast run on virtual time: one sender, three receive sides each handed every message by the
 * {@link MemoryTransport} (its replicas), two of them missing a few (one its flow's last: tail loss). Each receiver
 * is accounted on its own, exactly; the step shows the worst.
 */
class MulticastEngineTest {
    private static final long MS = 1_000_000L;
    private final VirtualTime time = new VirtualTime(7_000 * MS);
    private final MemoryTransport transport = new MemoryTransport(time).replicas();

    @AfterEach
    void noVirtualTaskFailed() {
        assertThat(time.taskFailures()).isEmpty();
    }

    private RunResult run(int steps) throws Exception {
        Plan plan = new Plan(List.of(MemoryTransport.NAME), 2, 40000, java.util.Collections.nCopies(steps,
            Level.of(1000)), 100 * MS, 0, 50 * MS, 64, "127.0.0.1");
        List<ReceiveSideFactory> receivers = List.of(ReceiveSideFactory.LOCAL, ReceiveSideFactory.LOCAL,
            ReceiveSideFactory.LOCAL);
        return RunEngine.multicast(plan, Map.of(MemoryTransport.NAME, transport), Map.of(), new RunListener() {
        }, receivers, SendSideFactory.local("127.0.0.1", time), 4242).withClock(time).run();
    }

    @Test
    void eachReceiverLosesExactlyWhatItMissedAndTheStepShowsTheWorst() throws Exception {
        transport.dropAt(1, 0, 0, 5).dropAt(1, 0, 0, 6).dropAt(1, 0, 1, 10).dropAt(2, 0, 1, 49);
        StepResult step = run(1).steps().get(0);
        List<ReceiverResult> rx = step.receivers();
        assertThat(rx).extracting(ReceiverResult::receiver).containsExactly("receiver 1", "receiver 2", "receiver 3");
        assertThat(rx).extracting(r -> r.counts().lost()).containsExactly(0L, 3L, 1L);
        assertThat(rx).extracting(r -> r.counts().lossEvents()).containsExactly(0L, 2L, 1L);
        assertThat(rx.get(1).flows()).extracting(f -> f.counts().lost()).containsExactly(2L, 1L);
        for (ReceiverResult r : rx) {
            assertThat(r.counts().sent()).isEqualTo(100);
            exact(r.counts());
            r.flows().stream().map(FlowResult::counts).forEach(MulticastEngineTest::exact);
        }
        assertThat(step.worstReceiver()).isEqualTo("receiver 2");
        assertThat(step.counts()).isEqualTo(rx.get(1).counts());
        assertThat(step.flows()).isEqualTo(rx.get(1).flows());
    }

    @Test
    void receiversThatLoseNothingLeaveTheFirstAsTheWorstAndEveryStepHasItsReceivers() throws Exception {
        transport.dropAt(2, 1, 0, 3);
        List<StepResult> steps = run(2).steps();
        assertThat(steps.get(0).worstReceiver()).isEqualTo("receiver 1");
        assertThat(steps.get(0).receivers()).extracting(r -> r.counts().lost()).containsExactly(0L, 0L, 0L);
        assertThat(steps.get(1).worstReceiver()).isEqualTo("receiver 3");
        assertThat(steps.get(1).receivers()).extracting(r -> r.counts().lost()).containsExactly(0L, 0L, 1L);
    }

    /**
     * The union over the receivers against the drops themselves: a message dropped before the fan-out (the
     * transport's own drop: no receiver is handed it) and one dropped at every receiver are lost at all; one dropped
     * at some is lost at some. The expected sets come from the drop lists, not from the engine's ranges.
     */
    @Test
    void theUnionOverReceiversIsTheDroppedSetsUnionAndIntersection() throws Exception {
        long[][] drops = {{0, 0, 5}, {0, 0, 6}, {1, 0, 5}, {1, 0, 7}, {1, 1, 49}, {2, 0, 5}, {2, 1, 3}, {2, 1, 4}};
        for (long[] d : drops) {
            transport.dropAt((int) d[0], 0, (int) d[1], d[2]);
        }
        transport.drop(0, 0, 20).drop(0, 1, 0);
        long[][] beforeFanOut = {{0, 20}, {1, 0}};
        StepResult step = run(1).steps().get(0);
        io.lossprobe.core.result.ReceiverUnion union = step.union();
        assertThat(union).isNotNull();
        assertThat(union.receivers()).isEqualTo(3);
        assertThat(union.exact()).isTrue();
        long anywhereAll = 0;
        long atAllAll = 0;
        for (int flow = 0; flow < 2; flow++) {
            List<java.util.Set<Long>> lost = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                java.util.Set<Long> set = new java.util.TreeSet<>();
                for (long[] d : drops) {
                    if (d[0] == r && d[1] == flow) {
                        set.add(d[2]);
                    }
                }
                for (long[] d : beforeFanOut) {
                    if (d[0] == flow) {
                        set.add(d[1]);
                    }
                }
                lost.add(set);
            }
            java.util.Set<Long> anywhere = new java.util.TreeSet<>();
            java.util.Set<Long> atAll = new java.util.TreeSet<>(lost.get(0));
            lost.forEach(anywhere::addAll);
            lost.forEach(atAll::retainAll);
            io.lossprobe.core.result.ReceiverUnion.Flow f = union.flows().get(flow);
            long sent = step.receivers().get(0).flows().get(flow).counts().sent();
            assertThat(f.exact()).isTrue();
            assertThat(f.sent()).isEqualTo(sent);
            assertThat(f.lostAnywhere()).as("flow %d lost anywhere", flow).isEqualTo(anywhere.size());
            assertThat(f.lostAtAll()).as("flow %d lost at all", flow).isEqualTo(atAll.size());
            assertThat(f.lostAtSome()).isEqualTo(anywhere.size() - atAll.size());
            assertThat(f.allReceived()).isEqualTo(sent - anywhere.size());
            assertThat(f.anyReceived()).isEqualTo(sent - atAll.size());
            UnionIdentities.check(f.sent(), f.allReceived(), f.anyReceived(), f.lostAnywhere(), f.lostAtAll(),
                f.lostAtSome(), step.receivers().stream().map(r -> r.flows().get(f.flow()).counts()).toList());
            anywhereAll += anywhere.size();
            atAllAll += atAll.size();
        }
        assertThat(union.lostAnywhere()).isEqualTo(anywhereAll);
        assertThat(union.lostAtAll()).isEqualTo(atAllAll);
        UnionIdentities.check(union.sent(), union.allReceived(), union.anyReceived(), union.lostAnywhere(),
            union.lostAtAll(), union.lostAtSome(), step.receivers().stream().map(ReceiverResult::counts).toList());
        // The union is part of the results file, and reads back as it was written.
        com.fasterxml.jackson.databind.ObjectMapper mapper = io.lossprobe.core.result.ResultFiles.mapper();
        StepResult back = mapper.readValue(mapper.writeValueAsBytes(step), StepResult.class);
        assertThat(back.union()).isEqualTo(union);
        assertThat(mapper.readTree(mapper.writeValueAsBytes(step)).get("union").get("flows").get(1).get("lostAtAll")
            .asLong()).isEqualTo(union.flows().get(1).lostAtAll());
    }

    @Test
    void aReceiverWithoutItsLostSetLeavesTheUnionUnknownNeverEstimated() {
        StepResult a = stepWithLost(3);
        List<io.lossprobe.core.accounting.FlowReceiver.Summary[]> sets = List.of(
            new io.lossprobe.core.accounting.FlowReceiver.Summary[] {summary(
                io.lossprobe.core.accounting.LostSet.of(new long[] {0, 3}, 10))},
            new io.lossprobe.core.accounting.FlowReceiver.Summary[] {summary(
                io.lossprobe.core.accounting.LostSet.UNKNOWN)});
        StepResult step = ReceiverSteps.compose(List.of("a", "b"), List.of(a, a), sets, false);
        assertThat(step.union().exact()).isFalse();
        assertThat(step.union().lostAnywhere()).isNull();
        assertThat(step.union().flows().get(0).unknown()).contains("b lost in more than 4096 ranges");
        assertThat(step.warnings()).anyMatch(w -> w.startsWith("the union over the receivers is unknown on 1 flow"));
        // A set that does not hold the receiver's lost numbers (3 lost, 2 in the set) is not composed either.
        StepResult wrong = ReceiverSteps.compose(List.of("a", "b"), List.of(a, a), List.of(sets.get(0),
            new io.lossprobe.core.accounting.FlowReceiver.Summary[] {summary(
                io.lossprobe.core.accounting.LostSet.of(new long[] {0, 2}, 10))}), false);
        assertThat(wrong.union().flows().get(0).unknown()).isEqualTo("b's lost set holds 2 numbers where it lost 3");
        StepResult good = ReceiverSteps.compose(List.of("a", "b"), List.of(a, a), List.of(sets.get(0), sets.get(0)),
            false);
        assertThat(good.union().lostAtAll()).isEqualTo(3);
        assertThat(good.warnings()).noneMatch(w -> w.contains("union"));
    }

    private static StepResult stepWithLost(long lost) {
        Counts c = new Counts(10, 10, 0, 0, 10 - lost, lost, lost, 0, 0, 0, 0, 0, 0, 1);
        FlowResult f = new FlowResult(0, 40000, c, null, null, null, null, null, 0, null, Map.of(), null);
        return new StepResult("memory", 0, Level.of(100), 100, 1, 0, c, 30, null, 10, 7, false, null, null, null,
            null, null, null, null, 0, null, null, null, Map.of(), null, null, Map.of(), Map.of(), List.of(), null,
            List.of(f));
    }

    private static io.lossprobe.core.accounting.FlowReceiver.Summary summary(
        io.lossprobe.core.accounting.LostSet set) {
        return new io.lossprobe.core.accounting.FlowReceiver.Summary(0, 7, 0, 0, 0, 0, 0, 0, 0, 1, 3, null,
            new io.lossprobe.core.result.SignedHistogram(), new io.lossprobe.core.result.SignedHistogram(),
            io.lossprobe.core.result.Latency.newHistogram(), 0, 0, 0, 0, null, set);
    }

    private static void exact(Counts c) {
        assertThat(c.received() + c.lost()).isEqualTo(c.sent());
        assertThat(c.lostInRuns()).isEqualTo(c.lost());
        assertThat(c.lossEvents() == 0).isEqualTo(c.lost() == 0);
        assertThat(c.foreign()).isZero();
        assertThat(c.corrupt()).isZero();
    }

    @Test
    void theLeastPerFlowIsWhatEveryReceiverGot() {
        assertThat(StepSides.leastPerFlow(new ArrayList<>(List.of(new long[] {5, 9}, new long[] {7, 3}))))
            .containsExactly(5, 3);
    }
}
