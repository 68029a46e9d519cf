package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.result.Echo;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.SenderLimit;
import io.lossprobe.core.result.StepResult;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

class StepTableTest {
    /** Step 0 of a real UDP result (src/test/resources/sample-result.json), with {@code delay} replaced. */
    private static StepResult step(Latency delay, Echo echo) throws IOException {
        try (InputStream in = StepTableTest.class.getResourceAsStream("/sample-result.json")) {
            ObjectNode step = (ObjectNode) ResultFiles.mapper().readTree(in).get("steps").get(0);
            step.set("delay", ResultFiles.mapper().valueToTree(delay));
            if (echo != null) {
                step.set("echo", ResultFiles.mapper().valueToTree(echo));
            }
            return ResultFiles.mapper().treeToValue(step, StepResult.class);
        }
    }

    private static List<String> columns(String line) {
        return List.of(line.trim().split("\\s+"));
    }

    @Test
    void anEmptyDelayHistogramPrintsDashesNotZero() throws IOException {
        List<String> header = columns(StepTable.header());
        int p50 = header.indexOf("p50");
        int p99 = header.indexOf("p99");
        List<String> recorded = columns(StepTable.row(step(new Latency(10, 500_000, 1_000, 348_159, 900_000,
            7_536_639, 9_000_000, 14_024_703, null, null), null), 64, false));
        assertThat(recorded.get(p50)).isEqualTo("348.2us");
        assertThat(recorded.get(p99)).isEqualTo("7.54ms");
        List<String> empty = columns(StepTable.row(step(Latency.EMPTY, null), 64, false));
        assertThat(empty.get(p50)).isEqualTo("-");
        assertThat(empty.get(p99)).isEqualTo("-");
    }

    /**
     * The flags say why the sender fell behind; a file from before {@code senderLimit} (the sample) adds nothing,
     * nor does a sender that kept up.
     */
    @Test
    void theFlagsSayWhyTheSenderFellBehind() throws IOException {
        StepResult old = step(Latency.EMPTY, null);
        assertThat(old.senderLimit()).isNull();
        assertThat(StepTable.row(old, 64, false)).doesNotContain("starved");
        for (SenderLimit.Reason reason : SenderLimit.Reason.values()) {
            StepResult s = withLimit(old, new SenderLimit(reason, reason == SenderLimit.Reason.NONE ? 0 : 1234, 0,
                1_000_000_000L, 412_000_000L, 80_000_000L, 30_000_000L, 0L, 0L));
            List<String> row = columns(StepTable.row(s, 64, false));
            int at = columns(StepTable.header()).indexOf("flags");
            assertThat(row.size() > at ? row.get(at) : "").isEqualTo(reason.flag());
        }
    }

    @Test
    void theProbeLineSaysWhatItsSenderLeftBehindOnlyWhenItDid() throws IOException {
        io.lossprobe.core.result.Echo echo = new io.lossprobe.core.result.Echo(997, 997, 0, 996, 1, 1, 0, 0, 0, 996.0,
            new Latency(996, 60_000, 40_000, 52_000, 58_000, 61_000, 90_000, 120_000, null, null));
        StepResult kept = step(new Latency(10, 500_000, 1_000, 348_159, 900_000, 7_536_639, 9_000_000, 14_024_703,
            null, null), null).withProbe(new io.lossprobe.core.result.ProbeResult("echo", 1000, 45402, 64, echo, 0));
        assertThat(StepTable.probeRow(kept)).isEqualTo("      probe: echo 1k/s on 45402  rtt p50 52.0us p99 61.0us "
            + "max 120.0us  lost 1 of 997");
        StepResult starved = kept.withProbe(new io.lossprobe.core.result.ProbeResult("echo", 1000, 45402, 64, echo,
            3));
        assertThat(StepTable.probeRow(starved)).endsWith("lost 1 of 997, 3 behind (its sender starved)");
    }

    private static StepResult withLimit(StepResult s, SenderLimit limit) {
        ObjectNode node = ResultFiles.mapper().valueToTree(s);
        node.set("senderLimit", ResultFiles.mapper().valueToTree(limit));
        try {
            return ResultFiles.mapper().treeToValue(node, StepResult.class);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * 100,000 64-byte messages a second are 51.2 Mb/s of payload; on the wire each is a frame of 64 + 8 (UDP) + 20
     * (IPv4) + 38 (Ethernet framing) = 130 bytes: 104.0 Mb/s.
     */
    @Test
    void bitsPerSecondOfPayloadAndOnTheWire() throws IOException {
        ObjectNode node = (ObjectNode) ResultFiles.mapper().valueToTree(step(Latency.EMPTY, null));
        node.put("achievedReceiveRate", 100_000.0);
        node.put("messageSize", 64);
        StepResult s = ResultFiles.mapper().treeToValue(node, StepResult.class);
        List<String> header = columns(StepTable.header());
        List<String> row = columns(StepTable.row(s, 1400, false));
        assertThat(row.get(header.indexOf("size"))).isEqualTo("64B");
        assertThat(row.get(header.indexOf("Mb/s"))).isEqualTo("51.2");
        assertThat(row.get(header.indexOf("wire-Mb/s"))).isEqualTo("104.0");
    }

    @Test
    void anEchoStepWithoutRepliesPrintsDashesForTheRoundTrip() throws IOException {
        Echo noReplies = new Echo(1000, 0, 1000, 0, 0, 1000, 0, 0, 0, 0.0, Latency.EMPTY);
        String line = StepTable.echoRow(step(Latency.EMPTY, noReplies));
        assertThat(line).contains("rtt mean - p50 - p90 - p99 - p99.9 - max -").doesNotContain("0ns");
        Echo answered = new Echo(10, 10, 0, 10, 0, 0, 0, 0, 0, 10.0,
            new Latency(10, 2_500, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000, null, null));
        assertThat(StepTable.echoRow(step(Latency.EMPTY, answered)))
            .contains("rtt mean 2.5us p50 2.0us p90 3.0us p99 4.0us p99.9 5.0us max 6.0us");
    }
    /** A step during which the host's cores were near saturation is flagged in its row and in the verdict. */
    @Test
    void aStepOnASaturatedHostIsFlaggedInTheRowAndTheVerdict() throws IOException {
        RunResult run = withHostCpu(96.4, 40);
        StepResult busy = run.steps().get(0);
        assertThat(StepTable.row(busy, 64, false)).contains("host-cpu=96%");
        assertThat(StepTable.row(run.steps().get(1), 64, false)).doesNotContain("host-cpu");
        assertThat(io.lossprobe.analysis.Verdict.of(run)).anyMatch(l -> l.startsWith(busy.transport() + ": ")
            && l.contains("the host's CPU was near saturation at " + busy.level() + " (up to 96 % of all cores)"));
        assertThat(io.lossprobe.analysis.Verdict.of(withHostCpu(89.9, 40)))
            .noneMatch(l -> l.contains("near saturation"));
    }

    /** The sample run with its two steps' host CPU set. */
    private static RunResult withHostCpu(double first, double second) throws IOException {
        try (InputStream in = StepTableTest.class.getResourceAsStream("/sample-result.json")) {
            ObjectNode tree = (ObjectNode) ResultFiles.mapper().readTree(in);
            ((ObjectNode) tree.get("steps").get(0).get("cpu")).put("hostPercent", first);
            ((ObjectNode) tree.get("steps").get(1).get("cpu")).put("hostPercent", second);
            return ResultFiles.mapper().treeToValue(tree, RunResult.class);
        }
    }
    /** The union line under a multicast step's receivers: its figures, or why they are unknown, never a guess. */
    @Test
    void theUnionLineSaysWhatEveryReceiverGotAndWhatAtLeastOneGot() {
        io.lossprobe.core.result.ReceiverUnion exact = io.lossprobe.core.result.ReceiverUnion.of(3, List.of(
            io.lossprobe.core.result.ReceiverUnion.Flow.of(0, 46000, 10_000, 300, 100),
            io.lossprobe.core.result.ReceiverUnion.Flow.of(1, 46001, 10_000, 5, 0)));
        assertThat(StepTable.unionRow(exact)).isEqualTo("   union of 3 receivers  every one got 19,695, at least one "
            + "got 19,900; lost at all 100, at some only 205, anywhere 305");
        io.lossprobe.core.result.ReceiverUnion unknown = io.lossprobe.core.result.ReceiverUnion.of(3, List.of(
            io.lossprobe.core.result.ReceiverUnion.Flow.of(0, 46000, 10_000, 300, 100),
            io.lossprobe.core.result.ReceiverUnion.Flow.unknown(1, 46001, 10_000, "b gave no lost set")));
        assertThat(StepTable.unionRow(unknown)).isEqualTo("   union of 3 receivers  unknown (flow 1: b gave no lost "
            + "set)");
    }

    /**
     * An Aeron multicast step (src/test/resources/sample-aeron-multicast-min.json, a lab run of
     * AeronMulticastLabSystemTest: flow control min, 198.18.0.102 shaped): each receiver's line ends with the NAKs
     * its driver sent, the sum of its flows' {@code aeron.rcvNaksSent}; a UDP step's lines have none.
     */
    @Test
    void anAeronReceiversLineShowsTheNaksItsDriverSent() throws IOException {
        try (InputStream in = StepTableTest.class.getResourceAsStream("/sample-aeron-multicast-min.json")) {
            StepResult step = ResultFiles.mapper().treeToValue(ResultFiles.mapper().readTree(in).get("steps").get(0),
                StepResult.class);
            List<String> rows = StepTable.receiverRows(step);
            assertThat(rows).hasSize(3);
            for (int i = 0; i < 3; i++) {
                long naks = step.receivers().get(i).flows().stream()
                    .mapToLong(f -> f.transport().get("aeron.rcvNaksSent")).sum();
                assertThat(rows.get(i)).startsWith("   receiver " + step.receivers().get(i).receiver())
                    .contains(String.format(java.util.Locale.ROOT, ", naks %,d", naks));
            }
            assertThat(rows.get(1)).doesNotContain("naks 0");
            assertThat(rows.get(0)).contains("naks 0");
        }
        try (InputStream in = StepTableTest.class.getResourceAsStream("/sample-multicast.json")) {
            StepResult udp = ResultFiles.mapper().treeToValue(ResultFiles.mapper().readTree(in).get("steps").get(0),
                StepResult.class);
            assertThat(StepTable.receiverRows(udp)).isNotEmpty().noneMatch(r -> r.contains("naks"));
        }
    }
}
