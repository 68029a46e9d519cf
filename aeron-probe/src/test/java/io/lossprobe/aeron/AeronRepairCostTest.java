package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.analysis.RepairCost;
import io.lossprobe.analysis.StepMetrics;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A reliable step's repair cost from a real driver's counters: the receiving driver drops 5% of the data datagrams
 * it receives (retransmissions included), so every lost frame is NAKed and resent, some more than once.
 */
@Tag("system")
class AeronRepairCostTest {
    @Test
    @Timeout(60)
    void aLossyStepsRepairCostIsItsOwnCountersRatios() throws Exception {
        RunResult result = AeronRuns.run(AeronLossTest.lossy(0.05, 24), AeronRuns.plan(8, 44760, List.of("8k"),
            1000), Map.of(), StepHooks.NONE);
        StepResult step = result.steps().get(0);
        Map<String, Long> c = step.transportCounters();
        RepairCost repair = StepMetrics.of(result, step).repair();
        System.out.println("repair cost, 5% dropped: " + repair + "\n  " + c + "\n  " + step.delay());

        assertThat(step.counts().lost()).isZero();
        assertThat(repair).isNotNull();
        assertThat(repair.lostFrames()).isEqualTo(c.get("aeron.lossReportFrames"));
        assertThat(repair.naks()).isEqualTo(c.get("aeron.rcvNaksSent")).isEqualTo(c.get("aeron.naksSent"));
        assertThat(repair.retransmits()).isEqualTo((double) c.get("aeron.retransmitsSent"));
        // One frame per message (64 bytes): the frames found missing are about 5% of those the step sent.
        long accepted = c.get("aeron.messagesAccepted");
        assertThat(repair.lostFrames()).isBetween(accepted / 50, accepted / 10);
        // Every byte found missing was resent at least once, and a NAK gets at most one retransmit.
        // (A retransmission resends a range: at 2 messages a datagram here, fewer retransmits than lost frames.)
        assertThat(repair.resentPerLostByte()).isGreaterThanOrEqualTo(1.0)
            .isEqualTo((double) c.get("aeron.retransmittedBytes") / c.get("aeron.lossReportBytes"));
        assertThat(repair.retransmitsPerNak()).isPositive().isLessThanOrEqualTo(1.0);
        assertThat(repair.retransmitsPerLostFrame()).isEqualTo(repair.retransmits() / repair.lostFrames());
        assertThat(repair.naksPerLostFrame()).isEqualTo((double) repair.naks() / repair.lostFrames());
        assertThat(repair.tailDelayShare()).isBetween(0.0, 1.0);
    }

    @Test
    @Timeout(60)
    void aStepWithNothingToRepairHasNoRepairCost() throws Exception {
        RunResult result = AeronRuns.run(new AeronTransport(), AeronRuns.plan(4, 44770, List.of("4k"), 500),
            Map.of(), StepHooks.NONE);
        StepResult step = result.steps().get(0);
        assertThat(step.transportCounters().get("aeron.lossReportFrames")).isZero();
        assertThat(StepMetrics.of(result, step).repair()).isNull();
    }
}
