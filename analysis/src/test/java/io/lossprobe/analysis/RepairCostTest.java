package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reliable Aeron step's repair cost (NAKs and retransmits per lost frame, the share of the delay beyond the
 * median) and the verdict that names it when the tail is most of the delay, and only then.
 */
class RepairCostTest {
    @TempDir
    Path dir;

    /**
     * The sample's 50k step as a reliable Aeron step of the lab (1% of UDP dropped into the receiver, 100k/s over 48
     * streams): nothing lost, {@code naks} NAKs for {@code frames} lost frames, 7,091 retransmits, delay p50 3.1 ms
     * and p99 1.17 s, with the mean given.
     */
    private List<String> verdict(long frames, long naks, long meanNs, Long uncertaintyNs) {
        return Verdict.of(Fixtures.load(dir, "aeron.json", aeronStep(frames, naks, meanNs, uncertaintyNs)).run());
    }

    private static ObjectNode aeronStep(long frames, long naks, long meanNs, Long uncertaintyNs) {
        ObjectNode root = Fixtures.withStep(1, s -> {
            s.put("transport", "aeron");
            s.putObject("transportCounters").put("aeron.lossReportFrames", frames).put("aeron.rcvNaksSent", naks)
                .put("aeron.naksSent", naks).put("aeron.retransmitsSent", frames == 0 ? 0 : 7_091)
                .put("aeron.lossGapFills", 0);
            s.remove("socketDrops");
            ((ObjectNode) s.get("cpu")).put("hostPercent", 40.0); // the sample's 98 % would add its own clause
            ObjectNode delay = (ObjectNode) s.get("delay");
            delay.put("meanNs", meanNs).put("p50Ns", 3_100_000).put("p90Ns", 9_000_000).put("p99Ns", 1_170_000_000)
                .put("p999Ns", 1_400_000_000).put("maxNs", 1_500_000_000);
            if (uncertaintyNs != null) {
                delay.put("basis", "clockOffset").put("uncertaintyNs", uncertaintyNs);
            }
        });
        root.withArray("steps").remove(0);
        return root;
    }

    @Test
    void theRatiosComeFromTheStepsOwnCounters() {
        RepairCost r = StepMetrics.all(Fixtures.load(dir, "a.json", aeronStep(3_285, 163_688, 14_000_000, null))
            .run()).get(0).repair();
        assertThat(r.lostFrames()).isEqualTo(3_285);
        assertThat(r.naks()).isEqualTo(163_688);
        assertThat(r.naksPerLostFrame()).isCloseTo(49.83, within(0.01));
        assertThat(r.retransmitsPerNak()).isCloseTo(0.0433, within(0.0001));
        assertThat(r.retransmitsPerLostFrame()).isCloseTo(2.159, within(0.001));
        assertThat(r.resentPerLostByte()).isNaN(); // the file holds no byte counts
        assertThat(r.tailDelayShare()).isCloseTo(10.9 / 14.0, within(1e-9));
        assertThat(r.dominatesDelay()).isTrue();
    }

    @Test
    void theVerdictNamesTheRepairCostWhenTheTailIsMostOfTheDelay() {
        assertThat(verdict(3_285, 163_688, 14_000_000, null)).containsExactly("aeron: no loss at 50k; delay p99 "
            + "1.17 s at 50k, most of it the tail where repairs wait: 78 % of all delay is beyond the median "
            + "(3.100 ms): 163,688 NAKs for 3,285 lost frames (50 per frame), 7,091 retransmits (2.2 per frame)");
    }

    @Test
    void repairsThatLeaveTheDelayNearTheMedianAreNotNamed() {
        // The same repairs, but the mean is near the median: the tail is a small part of the delay.
        assertThat(verdict(3_285, 163_688, 4_000_000, null)).containsExactly("aeron: no loss at 50k; delay p99 "
            + "1.17 s at 50k");
    }

    @Test
    void aTailWithoutRepairsIsNotCalledARepairWait() {
        // As heavy a tail, but nothing was found missing and no NAK sent (a stall of the host, say).
        assertThat(verdict(0, 0, 14_000_000, null)).containsExactly("aeron: no loss at 50k; delay p99 1.17 s at 50k");
        assertThat(StepMetrics.all(Fixtures.load(dir, "b.json", aeronStep(0, 0, 14_000_000, null)).run()).get(0)
            .repair()).isNull();
    }

    @Test
    void unreliableModeHasNoRepairCost() {
        // Gaps found (and filled), no NAK: nothing was repaired.
        ObjectNode root = aeronStep(3_285, 0, 14_000_000, null);
        ((ObjectNode) root.withArray("steps").get(0).get("transportCounters")).put("aeron.lossGapFills", 3_000);
        assertThat(StepMetrics.all(Fixtures.load(dir, "u.json", root).run()).get(0).repair()).isNull();
    }

    @Test
    void betweenHostsAClockBoundNearTheMeanLeavesTheShareUntold() {
        // The bound is a tenth of the mean: the share would be the clocks'. The counters are still given.
        RepairCost r = StepMetrics.all(Fixtures.load(dir, "c.json", aeronStep(3_285, 163_688, 14_000_000,
            1_400_000L)).run()).get(0).repair();
        assertThat(r.tailDelayShare()).isNaN();
        assertThat(r.dominatesDelay()).isFalse();
        assertThat(verdict(3_285, 163_688, 14_000_000, 50_000L)).singleElement().asString()
            .contains("(+-0.050 ms clock bound), most of it the tail where repairs wait: 78 %");
    }
}
