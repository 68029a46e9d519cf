package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.aeron.driver.ext.DebugReceiveChannelEndpoint;
import io.aeron.driver.ext.RandomLossGenerator;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The receiving driver drops 5% of incoming data datagrams (Aeron's debug receive endpoint): reliable Aeron
 * repairs every gap with NAKs and retransmits, unreliable Aeron fills the gaps and the loss shows.
 */
@Tag("system")
class AeronLossTest {
    private static final double DROP_RATE = 0.05;

    /** A transport whose embedded driver drops {@code rate} of the data datagrams it receives. */
    static AeronTransport lossy(double rate, long seed) {
        return new AeronTransport(ctx -> ctx.receiveChannelEndpointSupplier((channel, dispatcher, status, c) ->
            new DebugReceiveChannelEndpoint(channel, dispatcher, status, c, new RandomLossGenerator(rate, seed),
                (address, buffer, length) -> false)));
    }

    @Test
    @Timeout(60)
    void reliableModeRepairsEveryDroppedDatagramWithNaksAndRetransmits() throws Exception {
        RunResult result = AeronRuns.run(lossy(DROP_RATE, 42), AeronRuns.plan(8, 43100, List.of("8k"), 1000),
            Map.of(), StepHooks.NONE);

        StepResult step = result.steps().get(0);
        System.out.println("reliable, 5% dropped: " + step.counts() + "\n  " + step.transportCounters());
        assertThat(step.counts().sent()).isEqualTo(8000);
        assertThat(step.counts().lost()).isZero();
        assertThat(step.counts().duplicates()).isZero();
        assertThat(step.counts().received()).isEqualTo(step.counts().sent());
        assertThat(step.transportCounters().get("aeron.naksSent")).isPositive();
        assertThat(step.transportCounters().get("aeron.naksReceived")).isPositive();
        assertThat(step.transportCounters().get("aeron.retransmitsSent")).isPositive();
        assertThat(step.transportCounters().get("aeron.retransmittedBytes")).isPositive();
        assertThat(step.transportCounters().get("aeron.lossGapFills")).isZero();
        assertThat(step.transportCounters().get("aeron.lossReportBytes")).isPositive();
        // Over the step, from before its first message to after the repairs settled, so the counts agree exactly:
        // the receiver's per-stream NAKs with its driver's system counter, and the NAKs it sent with the NAKs the
        // sender received (loopback loses no NAK), and the sender's per-stream count with its system counter. The
        // warm-up matters: read as the window began, while its NAKs flowed, 7 runs in 20 failed here.
        long perStreamNaksSent = step.flows().stream().mapToLong(f -> f.transport().get("aeron.rcvNaksSent")).sum();
        long perStreamNaksReceived = step.flows().stream()
            .mapToLong(f -> f.transport().get("aeron.sndNaksReceived")).sum();
        assertThat(perStreamNaksSent).isPositive().isEqualTo(step.transportCounters().get("aeron.naksSent"));
        assertThat(step.transportCounters().get("aeron.naksReceived")).isEqualTo(perStreamNaksSent);
        assertThat(perStreamNaksReceived).isEqualTo(step.transportCounters().get("aeron.naksReceived"));
        assertThat(step.warnings()).isEmpty();
    }

    @Test
    @Timeout(60)
    void unreliableModeShowsLossThatMatchesTheGapFills() throws Exception {
        // No warm-up: warm-up messages are dropped too, and their gaps would be filled without being counted lost.
        RunResult result = AeronRuns.run(lossy(DROP_RATE, 7), AeronRuns.plan(8, 43200, List.of("8k"), 1000, 0),
            Map.of(AeronOptions.RELIABLE_OPTION.key(), "false"), StepHooks.NONE);

        StepResult step = result.steps().get(0);
        Map<String, Long> counters = step.transportCounters();
        System.out.println("unreliable, 5% dropped: " + step.counts() + "\n  " + counters);
        assertThat(step.counts().sent()).isEqualTo(8000);
        assertThat(step.counts().lost()).isPositive();
        assertThat(step.counts().received() + step.counts().lost()).isEqualTo(step.counts().sent());
        assertThat(counters.get("aeron.naksSent")).isZero();
        assertThat(counters.get("aeron.retransmitsSent")).isZero();
        // Every gap the receiver filled is one run of consecutive lost messages (RFC 3357 loss period).
        assertThat(counters.get("aeron.lossGapFills")).as("gap fills vs loss events")
                .isEqualTo(step.counts().lossEvents());
        // The loss report's bytes, in frames of one message each, are exactly the messages lost.
        assertThat(counters.get("aeron.lossReportFrames")).as("loss-report frames vs lost")
            .isEqualTo(step.counts().lost());
        for (FlowResult f : step.flows()) {
            assertThat(f.transport().get("aeron.lossReportFrames")).as("flow %d", f.flow())
                .isEqualTo(f.counts().lost());
        }
    }
}
