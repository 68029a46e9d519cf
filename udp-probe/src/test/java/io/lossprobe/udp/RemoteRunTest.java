package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlClient;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.DelayBaseline;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Receivers behind {@code lossprobe serve}'s control channel, senders in the controller: two controllers at
 * once against one server, each on its own ports, each with correct and separate results.
 */
@Tag("system")
class RemoteRunTest {
    private static final Auth AUTH = Auth.ofSecret("two hosts, one secret");

    private static RunResult runAgainst(ControlServer server, int basePort, String level) throws Exception {
        return runAgainst(server, basePort, level, 200);
    }

    private static RunResult runAgainst(ControlServer server, int basePort, String level, long warmupMs)
        throws Exception {
        return runAgainst(server, basePort, level, warmupMs, Map.of());
    }

    private static RunResult runAgainst(ControlServer server, int basePort, String level, long warmupMs,
                                        Map<String, String> options) throws Exception {
        Transport udp = new UdpTransport();
        Plan plan = new Plan(List.of("udp"), 8, basePort, List.of(Level.parse(level), Level.parse(level)),
            TimeUnit.MILLISECONDS.toNanos(800), TimeUnit.MILLISECONDS.toNanos(warmupMs), TimeUnit.SECONDS.toNanos(1),
            64, "127.0.0.1");
        int runId = basePort * 31;
        try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
            client.negotiate(plan, runId, options, List.of(udp));
            RunEngine engine = new RunEngine(plan, Map.of("udp", udp), options, new RunListener() {
            }, StepHooks.NONE, client.receiveSides(), "127.0.0.1", runId);
            return engine.run();
        }
    }

    @Test
    @Timeout(120)
    void twoControllersAgainstOneServerGetCorrectSeparateResults() throws Exception {
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null)) {
            CompletableFuture<RunResult> a = CompletableFuture.supplyAsync(() -> call(server, 41500, "4k"));
            CompletableFuture<RunResult> b = CompletableFuture.supplyAsync(() -> call(server, 41600, "8k"));
            RunResult ra = a.get(90, TimeUnit.SECONDS);
            RunResult rb = b.get(90, TimeUnit.SECONDS);
            for (RunResult r : List.of(ra, rb)) {
                assertThat(r.status()).hasToString("complete");
                assertThat(r.steps()).hasSize(2);
                for (StepResult s : r.steps()) {
                    for (FlowResult f : s.flows()) {
                        assertThat(f.counts().received() + f.counts().lost()).isEqualTo(f.counts().sent());
                        assertThat(f.counts().lost()).isEqualTo(f.socketDrops());
                        assertThat(f.counts().corrupt()).as("no cross-talk between sessions").isZero();
                    }
                    assertOneWayDelayOnTheEstimatedClock(s);
                    assertThat(s.delayBaseline().source()).isEqualTo(DelayBaseline.WARMUP);
                    assertThat(s.receiverHostCounters()).isNotNull();
                    assertThat(s.receiverCpu()).isNotNull();
                }
            }
            assertThat(ra.steps().get(0).counts().scheduled()).isEqualTo(3200);
            assertThat(rb.steps().get(0).counts().scheduled()).isEqualTo(6400);
            assertThat(ra.steps().get(0).flows().get(0).port()).isEqualTo(41500);
            assertThat(rb.steps().get(0).flows().get(0).port()).isEqualTo(41600);
            assertThat(ra.environment().socketBuffers()).containsKey("udp.remote.receiveBufferGranted");
        }
    }

    @Test
    @Timeout(120)
    void reverseTheServerSendsToTheControllerOnly() throws Exception {
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null)) {
            Transport udp = new UdpTransport();
            Plan plan = new Plan(List.of("udp"), 4, 41700, List.of(Level.parse("4k")),
                TimeUnit.MILLISECONDS.toNanos(800), TimeUnit.MILLISECONDS.toNanos(200), TimeUnit.SECONDS.toNanos(1),
                64, "127.0.0.1");
            RunResult r;
            try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
                client.negotiate(plan, 77, Map.of());
                r = new RunEngine(plan, Map.of("udp", udp), Map.of(), new RunListener() {
                }, StepHooks.NONE, io.lossprobe.core.engine.ReceiveSideFactory.LOCAL, client.sendSides(), 77)
                    .run();
            }
            StepResult s = r.steps().get(0);
            assertThat(r.status()).hasToString("complete");
            assertThat(s.counts().scheduled()).isEqualTo(3200);
            assertThat(s.counts().sent()).isEqualTo(3200);
            assertThat(s.counts().received() + s.counts().lost()).isEqualTo(s.counts().sent());
            assertThat(s.counts().lost()).isEqualTo(s.socketDrops());
            assertOneWayDelayOnTheEstimatedClock(s);
            assertThat(r.environment().socketBuffers()).containsKey("udp.remote.sendBufferGranted");
        }
    }

    /**
     * A server with several addresses, reached at one that is not its route's preferred source (127.0.0.5, whose
     * replies to 127.0.0.1 would leave from 127.0.0.1): its senders send from the address the controller reached it
     * at, the only one the controller's receivers take data from. Before, every datagram was foreign.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "udp.send={0}")
    @org.junit.jupiter.params.provider.CsvSource({"native, 42110", "netty, 42120"})
    @Timeout(120)
    void reverseFromAServerReachedAtAnotherOfItsAddresses(String send, int basePort) throws Exception {
        try (ControlServer server = new ControlServer("127.0.0.5", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null)) {
            Map<String, String> options = Map.of("udp.send", send);
            Plan plan = new Plan(List.of("udp"), 2, basePort, List.of(Level.parse("2k")),
                TimeUnit.MILLISECONDS.toNanos(500), TimeUnit.MILLISECONDS.toNanos(100),
                TimeUnit.MILLISECONDS.toNanos(300), 64, "127.0.0.1").withTransportOptions(options);
            RunResult r;
            try (ControlClient client = ControlClient.connect("127.0.0.5", server.port(), AUTH, 5_000)) {
                client.negotiate(plan, 79, options);
                r = new RunEngine(plan, Map.of("udp", new UdpTransport()), options, new RunListener() {
                }, StepHooks.NONE, io.lossprobe.core.engine.ReceiveSideFactory.local(client.peerAddress()),
                    client.sendSides(), 79)
                    .run();
            }
            assertThat(r.status()).hasToString("complete");
            StepResult s = r.steps().get(0);
            assertThat(s.counts().sent()).isEqualTo(1000);
            assertThat(s.counts().foreign()).as("data from another address than the one reached").isZero();
            assertThat(s.counts().received() + s.counts().lost()).isEqualTo(s.counts().sent());
            assertThat(s.counts().lost()).isEqualTo(s.socketDrops());
        }
    }

    /**
     * With no warm-up the controller's engine samples the window's counters before the first message, on both sides:
     * the server takes that sample before the step's start (it refused it as 'step 0 has not started', every time).
     */
    @Test
    @Timeout(120)
    void reverseWithoutWarmupRuns() throws Exception {
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null)) {
            Plan plan = new Plan(List.of("udp"), 2, 41750, List.of(Level.parse("2k"), Level.parse("4k")),
                TimeUnit.MILLISECONDS.toNanos(500), 0, TimeUnit.MILLISECONDS.toNanos(300), 64, "127.0.0.1");
            RunResult r;
            try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
                client.negotiate(plan, 78, Map.of());
                r = new RunEngine(plan, Map.of("udp", new UdpTransport()), Map.of(), new RunListener() {
                }, StepHooks.NONE, io.lossprobe.core.engine.ReceiveSideFactory.LOCAL, client.sendSides(), 78)
                    .run();
            }
            assertThat(r.status()).hasToString("complete");
            assertThat(r.steps()).hasSize(2);
            for (StepResult s : r.steps()) {
                assertThat(s.counts().sent()).isPositive();
                assertThat(s.counts().received() + s.counts().lost()).isEqualTo(s.counts().sent());
                assertThat(s.counts().lost()).isEqualTo(s.socketDrops());
            }
        }
    }

    /**
     * Both "hosts" are this machine, so the true clock offset is 0: the estimate must say so within its own
     * uncertainty (a check that fails if the offset's sign or arithmetic is wrong), and the corrected one-way
     * delays are real delays, not clamped to zero.
     */
    private static void assertOneWayDelayOnTheEstimatedClock(StepResult s) {
        assertThat(s.delay().basis()).isEqualTo(Latency.CLOCK_OFFSET);
        assertThat(s.clockOffset()).isNotNull();
        assertThat(Math.abs(s.clockOffset().offsetNs())).as("offset %s", s.clockOffset())
            .isLessThanOrEqualTo(s.clockOffset().uncertaintyNs());
        assertThat(s.clockDriftNs()).isNotNull();
        assertThat(s.delay().uncertaintyNs()).isGreaterThanOrEqualTo(s.clockOffset().uncertaintyNs());
        assertThat(s.delay().p50Ns()).as("p50 on loopback").isGreaterThan(-s.delay().uncertaintyNs());
        assertThat(s.delay().p99Ns()).isPositive();
        assertThat(s.delay().maxNs()).isGreaterThan(s.delay().p50Ns());
        assertThat(s.delayOverBaseline()).isNotNull();
        assertThat(s.delayOverBaseline().basis()).isEqualTo(Latency.OVER_BASELINE);
    }

    /**
     * With no warm-up (the lab example of docs/two-hosts.md) the delay used to collapse to 0 ns: now the one-way
     * delay is measured, and the baseline is said to be the window's own minimum, with a warning.
     */
    @Test
    @Timeout(120)
    void withNoWarmUpTheDelayIsStillMeasuredAndTheWeakBaselineIsNamed() throws Exception {
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null)) {
            RunResult r = runAgainst(server, 41800, "4k", 0);
            for (StepResult s : r.steps()) {
                assertOneWayDelayOnTheEstimatedClock(s);
                assertThat(s.delay().p50Ns()).as("p50").isNotZero();
                assertThat(s.delayBaseline().source()).isEqualTo(DelayBaseline.WINDOW);
                assertThat(s.delayBaseline().flowsOnWindow()).isEqualTo(8);
                assertThat(s.warnings()).anyMatch(w -> w.contains("fewer than 10 warm-up messages"));
            }
        }
    }

    /**
     * Between hosts the server's receivers take data only from the controller's address: datagrams from anywhere
     * else are refused before accounting (foreign), so a stranger sending the run's messages changes no count.
     */
    @Test
    @Timeout(120)
    void datagramsFromAnotherAddressThanTheControllersAreForeign() throws Exception {
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null);
             java.net.DatagramSocket stranger = new java.net.DatagramSocket(
                 new java.net.InetSocketAddress("127.0.0.2", 0))) {
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicLong sentByStranger = new java.util.concurrent.atomic.AtomicLong();
            Thread t = new Thread(() -> {
                byte[] junk = new byte[64];
                java.nio.ByteBuffer.wrap(junk).putLong(io.lossprobe.core.wire.MessageHeader.word0(
                    io.lossprobe.core.wire.MessageHeader.KIND_DATA, 0));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!stop.get() && System.nanoTime() < deadline && sentByStranger.get() < 5_000) {
                    try {
                        stranger.send(new java.net.DatagramPacket(junk, 64,
                            java.net.InetAddress.getByName("127.0.0.1"), 41900));
                        sentByStranger.incrementAndGet();
                    } catch (java.io.IOException e) {
                        return;
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
            });
            t.start();
            RunResult r;
            try {
                r = runAgainst(server, 41900, "4k");
            } finally {
                stop.set(true);
                t.join(10_000);
            }
            long foreign = 0;
            for (StepResult s : r.steps()) {
                assertThat(s.counts().lost()).isEqualTo(s.socketDrops());
                assertThat(s.counts().corrupt()).as("never parsed: refused by address first").isZero();
                foreign += s.flows().get(0).counts().foreign();
            }
            assertThat(foreign).isPositive().isLessThanOrEqualTo(sentByStranger.get());
        }
    }

    /**
     * With UDP_GRO on the server's sockets a stranger's GSO send reaches a reader as one coalesced read of several
     * datagrams: each of them is foreign, counted one by one (a read counted once would put the count at or below
     * the stranger's sends), and none is parsed.
     */
    @Test
    @Timeout(120)
    void aStrangersCoalescedDatagramsAreEachForeign() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(NativeUdp.available()
            && io.netty.channel.epoll.EpollDatagramChannel.isSegmentedDatagramPacketSupported(), "needs GSO and GRO");
        int segments = 8;
        io.netty.channel.EventLoopGroup group = io.lossprobe.netty.NettyIo.EPOLL.newGroup("stranger");
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null)) {
            io.netty.channel.Channel stranger = new io.netty.bootstrap.Bootstrap().group(group)
                .channel(io.netty.channel.epoll.EpollDatagramChannel.class)
                .handler(new io.netty.channel.ChannelInboundHandlerAdapter())
                .bind(new java.net.InetSocketAddress("127.0.0.2", 0)).sync().channel();
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicLong sends = new java.util.concurrent.atomic.AtomicLong();
            java.net.InetSocketAddress target = new java.net.InetSocketAddress("127.0.0.1", 42050);
            Thread t = new Thread(() -> {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!stop.get() && System.nanoTime() < deadline && sends.get() < 5_000) {
                    io.netty.buffer.ByteBuf b = stranger.alloc().directBuffer(segments * 64);
                    for (int k = 0; k < segments; k++) {
                        b.writeLong(io.lossprobe.core.wire.MessageHeader.word0(
                            io.lossprobe.core.wire.MessageHeader.KIND_DATA, 0)).writeZero(56);
                    }
                    if (!stranger.writeAndFlush(new io.netty.channel.unix.SegmentedDatagramPacket(b, 64, target))
                        .awaitUninterruptibly().isSuccess()) {
                        return;
                    }
                    sends.incrementAndGet();
                    java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
            });
            t.start();
            RunResult r;
            try {
                r = runAgainst(server, 42050, "4k", 200, Map.of("udp.gro", "on"));
            } finally {
                stop.set(true);
                t.join(10_000);
                stranger.close().sync();
            }
            long foreign = 0;
            for (StepResult s : r.steps()) {
                assertThat(s.counts().corrupt()).as("never parsed: refused by address first").isZero();
                assertThat(s.counts().received() + s.counts().lost()).isEqualTo(s.counts().sent());
                foreign += s.flows().get(0).counts().foreign();
            }
            assertThat(foreign).as("datagrams, %d sends of %d", sends.get(), segments)
                .isGreaterThan(sends.get()).isLessThanOrEqualTo(sends.get() * segments);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /**
     * -X means the same on both hosts: the receivers' options (once dropped by a fixed allow-list) reach the
     * server's receivers, as their own report of what they were given shows.
     */
    @Test
    @Timeout(120)
    void receiverOptionsApplyOnTheServer() throws Exception {
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null)) {
            RunResult r = runAgainst(server, 41950, "2k", 0, Map.of("udp.rxThreads", "1", "rcvbuf", "1MiB",
                "sndbuf", "512KiB", "udp.gso", "off"));
            assertThat(r.environment().transportSettings()).containsEntry("udp.remote.receiveThreads", 1L)
                .containsEntry("udp.gsoSegmentsPerSend", 1L);
            assertThat(r.environment().socketBuffers()).containsEntry("udp.remote.receiveBufferRequested", 1L << 20)
                .containsEntry("udp.sendBufferRequested", 512L << 10);
        }
    }

    /**
     * Between hosts the server's receivers learn each step's rate from the control protocol: at 20k/s a flow
     * (udp.gro=auto pays from 10k/s) they read with UDP_GRO, at 1k/s a flow they do not, and every message of a
     * coalesced read is accounted either way.
     */
    @Test
    @Timeout(120)
    void theServersReceiversTurnGroOnAtAStepFastEnough() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(NativeUdp.available(), "needs lossprobe's native reader");
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null)) {
            for (String level : List.of("8k", "160k")) {
                RunResult r = runAgainst(server, 42000, level);
                long expected = level.equals("160k") ? 1L : 0L;
                for (StepResult s : r.steps()) {
                    assertThat(s.transportCounters()).as("%s step %d", level, s.step())
                        .containsEntry(UdpCounter.RECEIVE_GRO.key, expected);
                    assertThat(s.counts().corrupt()).isZero();
                    assertThat(s.counts().received() + s.counts().lost()).isEqualTo(s.counts().sent());
                    assertThat(s.counts().received()).isPositive();
                }
            }
        }
    }

    private static RunResult call(ControlServer server, int basePort, String level) {
        try {
            return runAgainst(server, basePort, level);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
