package io.lossprobe.control;

import static io.lossprobe.control.ControlTesting.AUTH;
import static io.lossprobe.control.ControlTesting.LIMITS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.accounting.LostSet;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.StepStart;
import io.lossprobe.core.engine.StepTiming;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.LossBurst;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A multicast step's union needs each serve's lost numbers per flow: they travel in the step result of an
 * authenticated session when the close asks for them, and only then; a reply whose ranges could not come from a
 * tracker (out of order, past the wire end, more than asked for, not adding up to its lostInRuns) ends the session
 * with the reason.
 */
@Timeout(60)
class LostRangesTest {
    private ControlServer server;

    @BeforeEach
    void start() throws Exception {
        server = new ControlServer("127.0.0.1", 0, AUTH, LIMITS,
            ControlTesting.only(new ControlTesting.CountingTransport()), null);
    }

    @AfterEach
    void stop() {
        assertThat(server.internalErrors()).isZero();
        server.close();
    }

    /**
     * The serve's receivers get nothing (its transport moves no data), so each flow lost all of its wire sequences
     * but the failed range shipped with the progress poll: the ranges come back exactly, as asked, on a real session.
     */
    @Test
    void aCloseThatAsksGetsEveryFlowsLostRangesAndOneThatDoesNotGetsNone() throws Exception {
        Plan plan = new Plan(List.of("udp"), 4, 28100, List.of(Level.parse("1k"), Level.parse("2k")),
            1_000_000_000L, 0, 1_000_000_000L, 64, "127.0.0.1");
        try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
            client.negotiate(plan, 7, Map.of());
            try (ReceiveSide side = client.receiveSides().open(new ControlTesting.NoTransport(), plan, 7,
                client.dataKey(7), Map.of())) {
                StepStart start = StepStart.of(plan, 0, plan.levels().get(0), StepTiming.of(plan), SendFilter.NONE,
                    0);
                side.beginStep(start);
                start.failures()[1].add(2, 3);
                side.beginWindow();
                side.progress();
                long[] wireEnd = {10, 12, 0, 5};
                FlowReceiver.Summary[] flows = side.closeStep(0, wireEnd, true).flows();
                assertThat(flows[0].lostSet()).isEqualTo(LostSet.of(new long[] {0, 10}, 10));
                assertThat(flows[1].lostSet()).isEqualTo(LostSet.of(new long[] {0, 2, 5, 12}, 12));
                assertThat(flows[2].lostSet()).isEqualTo(LostSet.EMPTY);
                assertThat(flows[3].lostSet()).isEqualTo(LostSet.of(new long[] {0, 5}, 5));
                for (FlowReceiver.Summary s : flows) {
                    assertThat(s.lostSet().count()).isEqualTo(s.lostInRuns());
                }
                side.beginStep(StepStart.of(plan, 1, plan.levels().get(1), StepTiming.of(plan), SendFilter.NONE, 0));
                side.beginWindow();
                assertThat(side.closeStep(1, new long[] {3, 3, 3, 3}).flows())
                    .allSatisfy(s -> assertThat(s.lostSet()).isNull());
            }
        }
    }

    private static String empty() {
        Histogram h = Latency.newHistogram();
        ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(buf);
        return Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buf.array(), n));
    }

    private static Reply.FlowSummary summary(long lostInRuns, Reply.LostRanges lost) {
        String h = empty();
        return new Reply.FlowSummary(0, Math.max(0, 10 - lostInRuns), 0, 0, 0, 0, 0, 0, 0, lostInRuns == 0 ? 0 : 1,
            lostInRuns, LossBurst.NONE, h, null, h, null, h, 0, 0, 0, 0L, null, lost);
    }

    @Test
    void rangesThatNoTrackerMakesAreRefusedWithTheReason() throws Exception {
        int share = SummaryCodec.lostShare(4);
        Object[][] cases = {
            {summary(3, new Reply.LostRanges(true, new long[] {5, 7, 2, 3})), "bad lost ranges: lost ranges out of "
                + "order, overlapping or adjacent"},
            {summary(3, new Reply.LostRanges(true, new long[] {0, 2, 2, 3})), "adjacent"},
            {summary(3, new Reply.LostRanges(true, new long[] {8, 11})), "ends past the flow's wire end 10"},
            {summary(3, new Reply.LostRanges(true, new long[] {-3, 0})), "negative, empty or inverted"},
            {summary(3, new Reply.LostRanges(true, new long[] {0, 2})), "lost ranges holding 2 numbers where "
                + "lostInRuns is 3"},
            {summary(3, null), "step result without the lost ranges asked for"},
        };
        for (Object[] c : cases) {
            assertThatThrownBy(() -> SummaryCodec.decode((Reply.FlowSummary) c[0], 10, share))
                .isInstanceOf(ControlProtocolException.class).hasMessageContaining((String) c[1]);
        }
        assertThatThrownBy(() -> SummaryCodec.decode(summary(3, new Reply.LostRanges(true, new long[] {0, 3}))))
            .isInstanceOf(ControlProtocolException.class).hasMessage("step result with lost ranges nobody asked for");
        // 48 flows share a reply's ranges: each may carry 1/48th of them.
        int share48 = SummaryCodec.lostShare(48);
        assertThat(share48).isLessThan(share);
        long[] many = new long[2 * (share48 + 1)];
        for (int i = 0; i < many.length; i++) {
            many[i] = 2L * (i / 2) + i % 2;
        }
        assertThatThrownBy(() -> SummaryCodec.decode(summary(share48 + 1, new Reply.LostRanges(true, many)),
            1L << 20, share48))
            .hasMessage("a flow's lost ranges: " + (share48 + 1) + " where at most " + share48 + " may come");
        assertThat(SummaryCodec.decode(summary(3, new Reply.LostRanges(true, new long[] {0, 1, 4, 6})), 10, share)
            .lostSet().count()).isEqualTo(3);
        assertThat(SummaryCodec.decode(summary(3, new Reply.LostRanges(false, new long[0])), 10, share).lostSet())
            .isEqualTo(LostSet.UNKNOWN);
        assertThatThrownBy(() -> new Reply.LostRanges(false, new long[] {0, 1})).hasMessageContaining("not known");
    }

    /** The bound holds before anything is built from the frame: more pairs than a flow keeps is a bad message. */
    @Test
    void aFrameWithMoreRangesThanAFlowKeepsIsABadMessage() throws Exception {
        byte[] good = Codec.encode(new Reply.StepResult(List.of(summary(0, new Reply.LostRanges(true,
            new long[0]))), Map.of(), Map.of(), List.of(), null, null, null));
        assertThat(((Reply.StepResult) Codec.reply(good)).flows().get(0).lostRanges().known()).isTrue();
        StringBuilder pairs = new StringBuilder();
        for (int i = 0; i <= LostSet.MAX_RANGES; i++) {
            pairs.append(i == 0 ? "" : ",").append(2 * i).append(',').append(2 * i + 1);
        }
        String frame = new String(good, StandardCharsets.UTF_8).replace("\"pairs\":[]", "\"pairs\":[" + pairs + "]");
        assertThat(frame).contains(String.valueOf(2 * LostSet.MAX_RANGES + 1));
        assertThatThrownBy(() -> Codec.reply(frame.getBytes(StandardCharsets.UTF_8)))
            .isInstanceOf(ControlProtocolException.class)
            .hasMessageContaining("field 'pairs' has more than " + LostSet.MAX_RANGES + " ranges");
        String noField = new String(good, StandardCharsets.UTF_8).replace(",\"lostRanges\":{\"known\":true,"
            + "\"pairs\":[]}", "");
        assertThat(noField).doesNotContain("lostRanges");
        assertThatThrownBy(() -> Codec.reply(noField.getBytes(StandardCharsets.UTF_8)))
            .isInstanceOf(ControlProtocolException.class).hasMessageContaining("lostRanges");
    }
}
