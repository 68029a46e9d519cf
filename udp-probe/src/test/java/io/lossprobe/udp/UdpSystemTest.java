package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.wire.MessageHeader;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Raw UDP on real sockets: 48 ports, a receiver stalled on purpose, and stray datagrams. */
@Tag("system")
class UdpSystemTest extends TransportContractTest {
    private Map<String, String> options = Map.of();

    @Override
    protected Transport transport() {
        return new UdpTransport();
    }

    @Override
    protected int basePort() {
        return 41200;
    }

    @Override
    protected Map<String, String> options() {
        return options;
    }

    @Test
    @Timeout(120)
    void fortyEightPortsAtAModestRateLoseNothingTheKernelDidNotDrop() throws Exception {
        Plan plan = plan(48, List.of(Level.parse("48k")), 1000);
        RunResult result = run(plan, StepHooks.NONE);
        assertIdentities(result);
        StepResult step = result.steps().get(0);
        assertThat(step.flows()).hasSize(48);
        assertThat(step.counts().scheduled()).isEqualTo(48_000);
        for (FlowResult f : step.flows()) {
            assertThat(f.port()).isEqualTo(41200 + f.flow());
            assertThat(f.counts().lost()).as("flow %d", f.flow()).isEqualTo(f.socketDrops());
        }
        assertThat(result.environment().socketBuffers()).containsKey("udp.receiveBufferGranted")
            .doesNotContainKey("udp.receiveThreads");
        assertThat(result.environment().transportSettings()).containsKey("udp.receiveThreads")
            .doesNotContainKey("udp.receiveBufferGranted");
    }

    @Test
    @Timeout(120)
    void aReceiverPausedMidStepLosesExactlyWhatItsSocketsDropped() throws Exception {
        // A small receive buffer fills within milliseconds of the pause.
        pausedReceiver(Map.of("rcvbuf", "16384"));
    }

    @Test
    @Timeout(120)
    void aPausedReceiverShowsInTheDelayOnlyOnTheReceivingThreadsClock() throws Exception {
        pausedReceiver(Map.of("rcvbuf", "16384", "udp.timestamps", "user"));
    }

    /**
     * With UDP_GRO a socket drops a sender's GSO send whole and counts it once: socket drops are packets, so the
     * socket's share of the loss is an estimate, bounded per flow and labelled (docs/performance.md).
     */
    @Test
    @Timeout(120)
    void withGroAPausedReceiversDropsArePacketsAndTheirShareIsALabelledEstimate() throws Exception {
        this.options = Map.of("rcvbuf", "16384", "udp.gro", "on");
        // 100k/s per flow: about five messages per flow and 50 us cycle, so a packet carries several.
        Plan plan = plan(4, List.of(Level.parse("400k")), 1500).withWarmup(0); // exact window counters, as above
        RunResult result = runPausedFrom300To800Ms(plan);
        assertIdentities(result);
        StepResult step = result.steps().get(0);
        assertThat(step.counts().lost()).as("the pause must cost something").isPositive();
        // Each coalesced read's messages were accounted one by one (the bounds below are loose enough to pass
        // a reader that took whole reads for single corrupt messages).
        assertThat(step.counts().corrupt()).isZero();
        for (FlowResult f : step.flows()) {
            long lost = f.counts().lost() - f.counts().late();
            assertThat(f.socketDrops()).as("flow %d: packets", f.flow()).isNotNull()
                .isGreaterThanOrEqualTo(f.counts().lossEvents()).isLessThanOrEqualTo(lost);
            assertThat(lost).as("flow %d: at most 64 messages a packet", f.flow())
                .isLessThanOrEqualTo(f.socketDrops() * GsoSends.MAX_GSO_SEGMENTS);
        }
        assertThat(step.socketDrops()).as("packets, fewer than the messages lost").isLessThan(step.counts().lost());
        assertThat(step.attribution()).containsEntry("receiverSocket", step.counts().lost() - step.counts().late())
            .containsEntry("receiverSocketEstimated", 1L);
        assertThat(step.warnings()).anyMatch(w -> w.contains("drops in packets") && w.contains("an estimate")
            && w.contains("consistent on every flow"));
    }

    /**
     * With UDP_GRO lossprobe's own reader gets the kernel's coalesced datagrams, a slot holding several with one
     * stamp, and accounts each message of it: nothing is corrupt, everything sent arrives (a reader that took a
     * coalesced read for one message would find every message corrupt), and the stamps stay the kernel's.
     */
    @Test
    @Timeout(120)
    void withGroTheStampedReaderSplitsCoalescedReadsIntoTheirMessages() throws Exception {
        this.options = Map.of("udp.gro", "on");
        // 100k/s per flow: about five messages per flow and 50 us cycle, one GSO send each, coalesced whole.
        RunResult result = run(plan(4, List.of(Level.parse("400k")), 1000), StepHooks.NONE);
        assertIdentities(result);
        StepResult step = result.steps().get(0);
        assertThat(result.environment().transportSettings()).containsEntry("udp.gro", 1L)
            .containsEntry("udp.kernelTimestamps", NativeUdp.available() ? 1L : 0L);
        assertThat(step.counts().corrupt()).isZero();
        assertThat(step.counts().received()).as("all but what the sockets dropped (packets of <= 64)")
            .isGreaterThanOrEqualTo(step.counts().sent() - step.socketDrops() * GsoSends.MAX_GSO_SEGMENTS)
            .isPositive();
        assertThat(step.delay().timestampSource()).isEqualTo(NativeUdp.available() ? "kernel" : "user");
    }

    /**
     * {@code udp.gro=auto} (the default): a step at 2k/s a flow reads datagram by datagram (socket drops exact); the
     * first step at 100k/s a flow turns UDP_GRO on, and it stays on. After the switch the kernel coalesces (the
     * readers see several messages to a read) and each is still accounted: a reader that kept its small slots would
     * have every coalesced read cut short, and corrupt would not be 0.
     */
    @Test
    @Timeout(120)
    void groAutoTurnsOnAtTheFirstStepFastEnoughAndEveryCoalescedMessageIsAccounted() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(NativeUdp.available(), "needs lossprobe's native reader");
        long[] coalescedByStep = new long[3];
        RunResult result = run(plan(4, List.of(Level.parse("8k"), Level.parse("400k"), Level.parse("8k")), 1000),
            new StepHooks() {
                @Override
                public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs) {
                    coalescedByStep[step] = ((UdpReceiver) receiver).readers().stream()
                        .mapToLong(StampedReader::coalesced).sum();
                }
            });
        assertIdentities(result);
        assertThat(result.environment().transportSettings()).containsEntry("udp.groAuto", 1L)
            .doesNotContainKey("udp.gro");
        List<StepResult> steps = result.steps();
        assertThat(steps).extracting(s -> s.transportCounters().get(UdpCounter.RECEIVE_GRO.key))
            .containsExactly(0L, 1L, 1L);
        assertThat(coalescedByStep[0]).as("no UDP_GRO at 2k/s a flow").isZero();
        assertThat(coalescedByStep[1]).as("the kernel coalesced at 100k/s a flow").isPositive();
        for (StepResult step : steps) {
            assertThat(step.counts().corrupt()).as("step %d", step.step()).isZero();
            assertThat(step.counts().received()).as("step %d: all but what the sockets dropped", step.step())
                .isGreaterThanOrEqualTo(step.counts().sent() - step.socketDrops() * GsoSends.MAX_GSO_SEGMENTS)
                .isPositive();
        }
        assertThat(steps.get(0).attribution()).doesNotContainKey("receiverSocketEstimated");
    }

    /** A run whose receiver stops reading from 300 to 800 ms into the window. */
    private RunResult runPausedFrom300To800Ms(Plan plan) throws Exception {
        return run(plan, new StepHooks() {
            @Override
            public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs)
                throws Exception {
                long ms = TimeUnit.NANOSECONDS.toMillis(elapsedNs);
                receiver.setPaused(ms >= 300 && ms < 800);
            }
        });
    }

    private void pausedReceiver(Map<String, String> options) throws Exception {
        this.options = options;
        // No warm-up: the window's counters are sampled before its first message, so its socket drops are exactly
        // its messages'. With one, a receiver starved of CPU drops warm-up messages too, around a window-start
        // sample that comes late on a busy host (lost 3,239 against 3,255 socket drops beside a CPU hog).
        Plan plan = plan(4, List.of(Level.parse("20k")), 1500).withWarmup(0);
        RunResult result = runPausedFrom300To800Ms(plan);
        assertIdentities(result);
        StepResult step = result.steps().get(0);
        assertThat(step.counts().lost()).as("the pause must cost something").isPositive();
        for (FlowResult f : step.flows()) {
            assertThat(f.socketDrops()).isNotNull();
            assertThat(f.counts().lost()).as("flow %d: every loss is a socket drop; %s; lag %s; skew %d; %s",
                    f.flow(), f.counts(), step.senderLag(), step.counterSkewNs(), step.warnings())
                .isEqualTo(f.socketDrops());
            assertThat(f.counts().lossEvents()).isPositive();
        }
        // The host-wide counter saw at least those drops (other sockets on the host may add to it).
        assertThat(step.hostCounters().get("Udp.RcvbufErrors")).isGreaterThanOrEqualTo(step.counts().lost());
        assertThat(step.attribution()).containsEntry("receiverSocket", step.counts().lost())
            .containsEntry("pathOrUnknown", 0L);
        // Datagrams that sat in the buffer during the 500 ms pause were read late by up to its length: the
        // receiving thread's clock shows it; the kernel stamped them as they arrived, so its delays do not.
        if ("kernel".equals(step.delay().timestampSource())) {
            assertThat(step.delay().maxNs()).isLessThan(TimeUnit.MILLISECONDS.toNanos(300));
        } else {
            assertThat(step.delay().maxNs()).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    @Test
    @Timeout(120)
    void strayDatagramsAreCorruptAndNeverReceived() throws Exception {
        Plan plan = plan(2, List.of(Level.parse("2k")), 1000);
        int[] sentStray = {0};
        RunResult result = run(plan, new StepHooks() {
            @Override
            public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs)
                throws Exception {
                if (sentStray[0]++ > 0) {
                    return;
                }
                try (DatagramSocket s = new DatagramSocket()) {
                    InetAddress lo = InetAddress.getByName(LOOPBACK);
                    byte[] junk = new byte[64];
                    junk[0] = 'X';
                    s.send(new DatagramPacket(junk, junk.length, lo, basePort()));            // wrong magic
                    s.send(new DatagramPacket(new byte[10], 10, lo, basePort()));             // truncated
                    s.send(new DatagramPacket(new byte[0], 0, lo, basePort()));               // empty
                    ByteBuffer b = ByteBuffer.allocate(64);
                    b.putLong(MessageHeader.word0(MessageHeader.KIND_DATA, 0))
                        .putLong(MessageHeader.word1(12345, step, 64)).putLong(5).putLong(0);
                    s.send(new DatagramPacket(b.array(), 64, lo, basePort()));                // wrong run id
                }
            }
        });
        assertIdentities(result);
        FlowResult flow0 = result.steps().get(0).flows().get(0);
        assertThat(flow0.counts().corrupt()).isEqualTo(4);
        assertThat(flow0.counts().received()).isEqualTo(flow0.counts().sent() - flow0.counts().lost());
        assertThat(flow0.counts().duplicates()).isZero();
    }

    private static byte[] message(int kind, int runId, int step, long seq, long sendNs, long tag) {
        ByteBuffer b = ByteBuffer.allocate(64);
        b.putLong(MessageHeader.word0(kind, 0)).putLong(MessageHeader.word1(runId, step, 64)).putLong(seq)
            .putLong(sendNs).putLong(sendNs).putLong(tag);
        return b.array();
    }

    /**
     * Someone who has seen one datagram knows the run id. Before the tag, one forged datagram with sequence 2^62
     * made a loss-free flow report 4,182 of 6,000 lost; forged upcoming sequences hid real loss; a forged warm-up
     * moved the delay baseline. Now every one of them is foreign: the counts stay exactly what the sockets saw,
     * and the step says someone else is sending. A genuine message changed in one word fails its tag too; a
     * genuine one replayed unchanged is a duplicate, as the network's would be.
     */
    @Test
    @Timeout(120)
    void forgedAndAlteredDatagramsAreForeignAndLeaveTheCountsExact() throws Exception {
        int runId = 0x1234;
        io.lossprobe.core.wire.MessageAuth key = io.lossprobe.core.wire.MessageAuth.random();
        Plan plan = plan(4, List.of(Level.parse("8k")), 1000);
        int[] calls = {0};
        RunResult result = run(plan, new StepHooks() {
            @Override
            public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs)
                throws Exception {
                if (calls[0]++ > 0) {
                    return;
                }
                try (DatagramSocket s = new DatagramSocket()) {
                    InetAddress lo = InetAddress.getByName(LOOPBACK);
                    java.util.function.Consumer<byte[]> send = bytes -> {
                        try {
                            s.send(new DatagramPacket(bytes, bytes.length, lo, basePort()));
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    };
                    long now = System.nanoTime();
                    send.accept(message(MessageHeader.KIND_DATA, runId, step, 1L << 62, now, 42));   // huge seq
                    for (long seq = 1_000; seq < 1_100; seq++) {                                    // upcoming
                        send.accept(message(MessageHeader.KIND_DATA, runId, step, seq, now, seq * 31));
                    }
                    send.accept(message(MessageHeader.KIND_WARMUP, runId, step, 0, now - 60_000_000_000L, 7));
                    long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, 0);
                    long w1 = MessageHeader.word1(runId, step, 64);
                    long genuine = key.forPass("udp", 64).tag(w0, w1, 3, now, now); // the pass's own key
                    send.accept(message(MessageHeader.KIND_DATA, runId, step, 4, now, genuine)); // altered seq
                    send.accept(message(MessageHeader.KIND_DATA, runId, step, 3, now, genuine)); // replayed
                }
            }
        }, runId, key);
        assertIdentities(result);
        StepResult step = result.steps().get(0);
        FlowResult flow0 = step.flows().get(0);
        assertThat(flow0.counts().foreign()).isEqualTo(1 + 100 + 1 + 1);
        assertThat(flow0.counts().lost()).isEqualTo(flow0.socketDrops());
        assertThat(flow0.counts().duplicates()).isLessThanOrEqualTo(1);
        assertThat(step.counts().lost()).isEqualTo(step.socketDrops());
        assertThat(step.warnings()).anyMatch(w -> w.contains("foreign"));
        for (FlowResult f : step.flows()) {
            if (f.flow() != 0) {
                assertThat(f.counts().foreign()).isZero();
            }
        }
    }
}
