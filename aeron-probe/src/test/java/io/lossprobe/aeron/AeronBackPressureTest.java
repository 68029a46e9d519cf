package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.aeron.AeronCounters;
import io.aeron.driver.status.SystemCounterDescriptor;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.ReceiverEndpoint;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A receiver that stops polling: Aeron's flow control stops the sender once the image and the publication window
 * are full, so the sender falls behind (back pressure) and nothing is lost, and what is queued stays within the
 * term buffers already mapped.
 */
@Tag("system")
class AeronBackPressureTest {
    private static final int TERM_LENGTH = 64 * 1024;

    @Test
    @Timeout(60)
    void aStalledReceiverShowsBackPressureAndBehindNotLossAndBoundedMemory() throws Exception {
        AtomicReference<AeronReceiver> stalled = new AtomicReference<>();
        AtomicLong mappedAtPause = new AtomicLong();
        AtomicLong mappedChanges = new AtomicLong();
        AtomicLong mostQueuedBytes = new AtomicLong();
        StepHooks stallAfter100ms = new StepHooks() {
            @Override
            public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs) {
                AeronReceiver aeron = (AeronReceiver) receiver;
                AeronDriver driver = aeron.driver();
                if (stalled.get() == null && elapsedNs >= TimeUnit.MILLISECONDS.toNanos(100)) {
                    aeron.setPaused(true);
                    mappedAtPause.set(driver.system(SystemCounterDescriptor.BYTES_CURRENTLY_MAPPED));
                    stalled.set(aeron);
                }
                if (stalled.get() != null) {
                    if (driver.system(SystemCounterDescriptor.BYTES_CURRENTLY_MAPPED) != mappedAtPause.get()) {
                        mappedChanges.incrementAndGet();
                    }
                    long[] published = driver.perFlow(AeronCounters.DRIVER_PUBLISHER_POS_TYPE_ID, 2, (f, s) -> true);
                    long[] consumed = driver.perFlow(AeronCounters.DRIVER_SUBSCRIBER_POSITION_TYPE_ID, 2,
                        (f, s) -> true);
                    for (int i = 0; i < 2; i++) {
                        mostQueuedBytes.accumulateAndGet(published[i] - consumed[i], Math::max);
                    }
                }
            }
        };
        RunListener resumeOnDrain = new RunListener() {
            @Override
            public void progress(String transport, int step, Phase phase, long elapsedNs, long totalNs, long sent,
                                 long received) {
                AeronReceiver receiver = stalled.get();
                if (phase == Phase.DRAIN && receiver != null) {
                    receiver.setPaused(false);
                }
            }
        };

        RunResult result = AeronRuns.run(new AeronTransport(), AeronRuns.plan(2, 43300, List.of("4k"), 1000),
            Map.of(AeronOptions.TERM_LENGTH_OPTION.key(), "64k"), stallAfter100ms, resumeOnDrain);

        StepResult step = result.steps().get(0);
        System.out.println("stalled receiver: " + step.counts() + " most queued " + mostQueuedBytes.get()
            + " B\n  " + step.transportCounters());
        assertThat(stalled.get()).isNotNull();
        assertThat(step.counts().lost()).isZero();
        assertThat(step.counts().sendFailed()).isZero();
        assertThat(step.counts().received()).isEqualTo(step.counts().sent());
        for (FlowResult f : step.flows()) {
            assertThat(f.counts().behind()).as("flow %d behind", f.flow()).isPositive();
            assertThat(f.counts().sent() + f.counts().behind()).isEqualTo(f.counts().scheduled());
            assertThat(f.transport().get("aeron.backPressureEpisodes")).as("flow %d", f.flow()).isPositive();
            assertThat(f.transport().get("aeron.sndBpe")).as("flow %d", f.flow()).isPositive();
        }
        assertThat(step.transportCounters().get("aeron.senderFlowControlLimits")).isPositive();
        // Bounded: what waits for the stalled receiver fits in the publication window plus the receiver window,
        // both within one term; nothing new was mapped while it waited.
        assertThat(mostQueuedBytes.get()).isPositive().isLessThanOrEqualTo(TERM_LENGTH);
        assertThat(mappedChanges.get()).isZero();
    }
}
