package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Echo;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.EchoReplies;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageHeader;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Aeron's own side of echo mode: the reply counters, reliable and unreliable reply streams under loss, and a
 * requester that stops taking replies (replies are dropped and counted, never queued without bound).
 * Ports: 43650-43653 (+ replies 43654-43657), 43660-43663 (+ 43664-43667), 43700 (+ 43701).
 */
@Tag("system")
class AeronEchoTest {
    private static final int RUN_ID = 0x5EED;

    private static Plan echoPlan(int ports, int basePort, String level, long durationMs, int size) {
        return new Plan(List.of("aeron"), ports, basePort, List.of(Level.parse(level)),
            TimeUnit.MILLISECONDS.toNanos(durationMs), TimeUnit.MILLISECONDS.toNanos(200),
            TimeUnit.SECONDS.toNanos(2), size, AeronRuns.LOOPBACK, Plan.ECHO, 0);
    }

    private static void assertIdentities(StepResult step) {
        assertThat(step.echo().identitiesHold()).as("%s", step.echo()).isTrue();
        for (FlowResult f : step.flows()) {
            assertThat(f.echo().identitiesHold()).as("flow %d: %s", f.flow(), f.echo()).isTrue();
        }
    }

    @Test
    @Timeout(60)
    void reliableRepliesSurviveLossAndEveryAnsweredRequestIsCountedAsSent() throws Exception {
        // The shared embedded driver drops 5% of the data datagrams it receives: requests and replies alike.
        RunResult r = AeronRuns.run(AeronLossTest.lossy(0.05, 11), echoPlan(4, 43650, "4k", 500, 64), Map.of(),
            StepHooks.NONE);
        StepResult s = r.steps().get(0);
        Map<String, Long> counters = s.transportCounters();
        System.out.println("reliable echo, 5% dropped: " + s.echo() + "\n  " + counters);
        assertIdentities(s);
        assertThat(s.counts().scheduled()).isEqualTo(2000);
        assertThat(s.echo().requestsSent()).isBetween(1800L, 2000L); // behind only if starved at the window's end
        assertThat(s.echo().roundTripLost()).isZero();
        assertThat(counters.get("aeron.naksSent")).isPositive();
        // Replies lost on the wire were repaired by the requester's driver: its NAKs on the reply streams.
        assertThat(counters.get(AeronProbeCounter.REPLY_NAKS_SENT.key)).isPositive();
        // One driver serves both sides here, so its own NAK total over the step is exactly the two directions'
        // per-stream counts, every baseline taken before the step's first message (a reply-NAK baseline taken at
        // another moment than the driver's once gave 871 reply NAKs against the driver's 867 in all).
        assertThat(counters.get("aeron.naksSent")).isEqualTo(
            counters.get(AeronProbeCounter.RCV_NAKS_SENT.key) + counters.get(AeronProbeCounter.REPLY_NAKS_SENT.key));
        assertThat(counters.get(EchoReplies.SENT)).isEqualTo(s.echo().requestsReceived());
        assertThat(counters.get(EchoReplies.DROPPED)).isZero();
        for (FlowResult f : s.flows()) {
            assertThat(f.transport().get(EchoReplies.SENT)).isEqualTo(f.echo().requestsReceived());
        }
        assertThat(s.warnings()).isEmpty();
    }

    @Test
    @Timeout(60)
    void unreliableRepliesShowTheirLossAsReplyLoss() throws Exception {
        RunResult r = AeronRuns.run(AeronLossTest.lossy(0.05, 5), echoPlan(4, 43660, "4k", 500, 64),
            Map.of(AeronOptions.RELIABLE_OPTION.key(), "false"), StepHooks.NONE);
        StepResult s = r.steps().get(0);
        Map<String, Long> counters = s.transportCounters();
        System.out.println("unreliable echo, 5% dropped: " + s.echo() + "\n  " + counters);
        assertIdentities(s);
        Echo e = s.echo();
        assertThat(e.requestsLost()).isPositive();
        assertThat(e.repliesLost()).as("the reply stream is unreliable too").isPositive();
        // Lost on the wire, not refused by the reply publication.
        assertThat(counters.get(EchoReplies.SENT)).isEqualTo(e.requestsReceived());
        assertThat(counters.get(EchoReplies.DROPPED)).isZero();
        assertThat(counters.get("aeron.naksSent")).isZero();
        assertThat(counters.get(AeronProbeCounter.REPLY_NAKS_SENT.key)).isZero();
        assertThat(counters.get(AeronProbeCounter.REPLY_LOSS_REPORT_BYTES.key)).isPositive();
    }

    @Test
    @Timeout(60)
    void aRequesterThatStopsTakingRepliesGetsThemDroppedAndCountedNotQueued() throws Exception {
        int size = 1024;
        int requests = 400;
        int termLength = 64 * 1024;
        Plan plan = echoPlan(1, 43700, "1k", 1000, size);
        Map<String, String> options = Map.of(AeronOptions.TERM_LENGTH_OPTION.key(), "64k");
        io.lossprobe.core.wire.MessageAuth key = io.lossprobe.core.wire.MessageAuth.random();
        FlowReceiver[] flows = {new FlowReceiver(0, RUN_ID, size, 1, false, key)};
        FlowReceiver[] replies = {new FlowReceiver(0, RUN_ID, size, 1, true, key)};
        AeronTransport transport = new AeronTransport();
        try (AeronReceiver rx = (AeronReceiver) transport.openReceiver(
                new ReceiverSpec(plan, AeronRuns.LOOPBACK, flows, options, null, null));
             AeronSender tx = (AeronSender) transport.openSender(
                 new SenderSpec(plan, AeronRuns.LOOPBACK, RUN_ID, options, replies, null, key))) {
            rx.beginStep(0);
            rx.onFlowThreads(i -> flows[i].beginStep(0, 4096));
            tx.onReplyThread(() -> replies[0].beginStep(0, 4096));
            tx.beginStep(0);

            // Stall the requester's reply thread: its image fills, then the responder's reply publication.
            CountDownLatch stalled = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            CompletableFuture<Void> stall = CompletableFuture.runAsync(() -> {
                try {
                    tx.onReplyThread(() -> {
                        stalled.countDown();
                        try {
                            resume.await(30, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            try {
                assertThat(stalled.await(10, TimeUnit.SECONDS)).isTrue();
                MessageWriter writer = tx.writer(0);
                long word0 = MessageHeader.word0(MessageHeader.KIND_DATA, 0);
                long word1 = MessageHeader.word1(RUN_ID, 0, size);
                for (long seq = 0; seq < requests; seq++) {
                    long s = seq;
                    await("request " + seq + " accepted",
                        () -> {
                            long t = System.nanoTime();
                            return writer.write(word0, word1, s, t, t, key.tag(word0, word1, s, t, t))
                                == MessageWriter.ACCEPTED;
                        });
                }
                // Each request is answered (or its reply dropped) on the receive thread as it arrives.
                await("all requests received", () -> flows[0].progress() == requests);
            } finally {
                resume.countDown();
            }
            stall.get(10, TimeUnit.SECONDS);

            TransportReport report = rx.endStep();
            Map<String, Long> c = report.counters();
            System.out.println("stalled requester: " + c);
            long sent = c.get(EchoReplies.SENT);
            long dropped = c.get(EchoReplies.DROPPED);
            assertThat(c.get(AeronProbeCounter.REPLIES_DROPPED_BACK_PRESSURED.key)).isPositive().isEqualTo(dropped);
            assertThat(c.get(AeronProbeCounter.REPLY_BACK_PRESSURE_EPISODES.key)).isPositive();
            assertThat(sent + dropped).isEqualTo(requests);
            // Bounded: what the publication took for a stalled requester fits its window and the requester's
            // receive window, both within one term (the last claim may start just below the limit).
            long frame = BitUtilFrames.frameLength(size);
            assertThat(sent * frame).isLessThanOrEqualTo(termLength + frame);
            assertThat(report.flows().get(0).get(EchoReplies.DROPPED)).isEqualTo(dropped);

            await("the replies taken arrive", () -> replies[0].progress() == sent);
            FlowReceiver.Summary[] summary = new FlowReceiver.Summary[1];
            tx.onReplyThread(() -> summary[0] = replies[0].closeStep(requests));
            rx.onFlowThreads(i -> flows[i].closeStep(requests));
            assertThat(summary[0].received()).isEqualTo(sent);
            assertThat(summary[0].lostInRuns()).as("dropped replies are reply loss").isEqualTo(dropped);
        }
    }

    /** Aeron's frame for one unfragmented message: 32-byte data header plus the message, 32-byte aligned. */
    private static final class BitUtilFrames {
        static long frameLength(int messageSize) {
            return org.agrona.BitUtil.align(io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH + messageSize,
                io.aeron.logbuffer.FrameDescriptor.FRAME_ALIGNMENT);
        }
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() >= deadline) {
                throw new AssertionError("timed out waiting: " + what);
            }
            Thread.onSpinWait();
        }
    }
}
