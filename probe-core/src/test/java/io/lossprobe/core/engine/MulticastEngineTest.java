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
