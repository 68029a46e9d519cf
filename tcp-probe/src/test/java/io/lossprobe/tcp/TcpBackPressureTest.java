package io.lossprobe.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.ReceiverEndpoint;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A receiver that stops reading mid-step: TCP loses nothing, the sender blocks instead (behind and delay rise)
 * and its queue stays under the water mark: memory is bounded whatever the stall's length.
 */
@Tag("system")
class TcpBackPressureTest {
    private static final int SIZE = 512;
    private static final int SMALL_BUFFER = 64 * 1024;
    private static final long RATE = 8_000;
    private static final long STALL_FROM_MS = 200;
    private static final long STALL_UNTIL_MS = 900;
    private static final long POOL_SLACK_BYTES = 8L << 20;

    @Test
    @Timeout(60)
    void aStalledReceiverBlocksTheSenderWithinItsWaterMarkAndLosesNothing() throws Exception {
        // Small socket buffers and water mark, so 700 ms of 2 MB/s per flow cannot hide in buffers.
        Map<String, String> options = Map.of("rcvbuf", Integer.toString(SMALL_BUFFER),
            "sndbuf", Integer.toString(SMALL_BUFFER),
            TcpSettings.HIGH_WATER_MARK_OPTION.key(), Integer.toString(SMALL_BUFFER));
        Plan plan = TcpRuns.plan(2, 42200, List.of(Level.of(RATE)), 1500, 3000, SIZE);
        AtomicLong pausedAtNs = new AtomicLong(-1);
        AtomicLong resumedAtNs = new AtomicLong(-1);
        AtomicLong mostBehind = new AtomicLong();
        AtomicLong mostDirect = new AtomicLong();
        io.netty.buffer.ByteBufAllocatorMetric pool =
            ((io.netty.buffer.ByteBufAllocatorMetricProvider) io.netty.buffer.ByteBufAllocator.DEFAULT).metric();

        StepHooks stall = new StepHooks() {
            @Override
            public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs)
                throws Exception {
                mostDirect.accumulateAndGet(pool.usedDirectMemory(), Math::max);
                if (pausedAtNs.get() < 0 && elapsedNs >= TimeUnit.MILLISECONDS.toNanos(STALL_FROM_MS)) {
                    receiver.setPaused(true);
                    pausedAtNs.set(elapsedNs);
                } else if (pausedAtNs.get() >= 0 && resumedAtNs.get() < 0
                    && elapsedNs >= TimeUnit.MILLISECONDS.toNanos(STALL_UNTIL_MS)) {
                    receiver.setPaused(false);
                    resumedAtNs.set(elapsedNs);
                }
            }
        };
        RunListener watchBehind = new RunListener() {
            @Override
            public void progress(String transport, int step, Phase phase, long elapsedNs, long totalNs, long sent,
                                 long received) {
                if (phase == Phase.WINDOW) {
                    long scheduledSoFar = RATE * elapsedNs / 1_000_000_000L;
                    mostBehind.accumulateAndGet(scheduledSoFar - sent, Math::max);
                }
            }
        };

        RunResult result = TcpRuns.run(plan, options, stall, watchBehind);

        assertThat(pausedAtNs.get()).as("stalled").isPositive();
        assertThat(resumedAtNs.get()).as("resumed within the window").isPositive();
        long stallNs = resumedAtNs.get() - pausedAtNs.get();
        TcpRuns.assertIdentities(result);
        StepResult step = result.steps().get(0);
        assertThat(step.counts().lost()).as("TCP loses nothing to a slow reader").isZero();
        assertThat(step.counts().sendFailed()).isZero();
        assertThat(step.counts().corrupt()).isZero();
        assertThat(step.counts().duplicates()).isZero();
        assertThat(step.counts().reordered()).isZero();
        // The stall shows where it belongs: the sender fell behind and the delay grew by about the stall.
        long scheduledInStall = RATE * stallNs / 1_000_000_000L;
        assertThat(mostBehind.get()).as("most messages behind schedule during the window")
            .isGreaterThan(scheduledInStall / 4);
        assertThat(step.delay().maxNs()).isGreaterThan(stallNs / 2);
        assertThat(step.senderLag().maxNs()).isGreaterThan(stallNs / 4);

        for (FlowResult flow : step.flows()) {
            Map<String, Long> tcp = flow.transport();
            assertThat(tcp.get(TcpCounter.WRITE_BLOCKED_EPISODES.key)).as("flow %d blocked", flow.flow()).isPositive();
            // Bounded: Netty's queue never held more buffer memory (not bytes: HeldMemoryEstimator) than the high
            // water mark plus the one batch being written.
            long bound = SMALL_BUFFER + new FlowWriter(0, SIZE, null).batchCapacity();
            assertThat(tcp.get(TcpCounter.MAX_QUEUED_BYTES.key)).as("flow %d queued bytes", flow.flow())
                .isPositive().isLessThanOrEqualTo(bound);
            assertThat(tcp.get(TcpCounter.CONNECTION_FAILURES.key)).isZero();
        }
        // The same from the allocator: every pooled direct buffer of this process (both sides) stays within the
        // flows' bounds and a slack for the pool's chunks and the receivers' reads.
        long perFlow = SMALL_BUFFER + new FlowWriter(0, SIZE, null).batchCapacity();
        assertThat(mostDirect.get()).as("pooled direct memory in use").isPositive()
            .isLessThanOrEqualTo(plan.ports() * perFlow + POOL_SLACK_BYTES);
        System.out.printf("pooled direct memory in use at most %d bytes%n", mostDirect.get());
        System.out.printf("stall %.0f ms: most behind %d (scheduled in stall %d), final behind %d, delay max %.1f ms,"
                + " p99 %.1f ms, sender lag max %.1f ms, max queued %s, blocked episodes %s%n",
            stallNs / 1e6, mostBehind.get(), scheduledInStall, step.counts().behind(), step.delay().maxNs() / 1e6,
            step.delay().p99Ns() / 1e6, step.senderLag().maxNs() / 1e6,
            step.flows().stream().map(f -> f.transport().get(TcpCounter.MAX_QUEUED_BYTES.key)).toList(),
            step.flows().stream().map(f -> f.transport().get(TcpCounter.WRITE_BLOCKED_EPISODES.key)).toList());
    }
}
