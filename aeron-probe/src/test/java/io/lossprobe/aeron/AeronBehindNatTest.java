package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.aeron.ExclusivePublication;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.engine.LocalSendSide;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.ReceiveSideFactory;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.SendSide;
import io.lossprobe.core.engine.SendSideFactory;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.Punch;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Aeron senders behind a NAT ({@code SenderSpec.Reach.BEHIND_NAT}): dynamic multi-destination-cast publications that
 * send only where their receivers' status messages came from, reached by {@code AeronReceiver.punch}; on loopback,
 * each side with a driver of its own. Ports 44820-44839.
 */
@Tag("system")
class AeronBehindNatTest {
    private static final String LOOPBACK = AeronRuns.LOOPBACK;
    private static final long PUNCH_DEADLINE_NS = TimeUnit.SECONDS.toNanos(10);

    /**
     * The engine's own run with the senders opened behind a NAT and the real receivers punching before the first
     * step, as {@code RemoteSendSide.reachFrom} does: every message arrives, reliable or not.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    @Timeout(90)
    void sendersBehindANatReachTheirPunchingReceiversWithExactCounts(boolean reliable) throws Exception {
        int basePort = reliable ? 44820 : 44824;
        Map<String, String> options = Map.of(AeronOptions.RELIABLE_OPTION.key(), String.valueOf(reliable),
            AeronOptions.TERM_LENGTH_OPTION.key(), "64k");
        Plan plan = AeronRuns.plan(2, basePort, List.of("2k", "4k"), 500, 100).withTransportOptions(options);
        AeronTransport receivers = new AeronTransport();
        AeronTransport senders = new AeronTransport();
        List<int[]> controlPorts = new ArrayList<>();
        SendSideFactory behindNat = (transport, p, runId, auth, opts) -> punchingFirst(LocalSendSide.open(senders,
            new SenderSpec(p, LOOPBACK, runId, opts, auth).reaching(SenderSpec.Reach.BEHIND_NAT)), controlPorts);
        RunResult result = new RunEngine(plan, Map.of("aeron", receivers), options, new RunListener() {
        }, StepHooks.NONE, ReceiveSideFactory.LOCAL, behindNat, 4242).run();

        assertThat(result.status()).hasToString("complete");
        assertThat(controlPorts).as("one pass, punched once").hasSize(1);
        assertThat(controlPorts.get(0)).hasSize(2).doesNotContain(0, basePort, basePort + 1);
        assertThat(result.steps()).hasSize(2);
        for (StepResult s : result.steps()) {
            assertThat(s.counts().sent()).as("step %d sent", s.step()).isPositive();
            assertThat(s.counts().received()).as("step %d: sent == received", s.step()).isEqualTo(s.counts().sent());
            assertThat(s.counts().lost()).isZero();
            assertThat(s.counts().foreign()).isZero();
            for (FlowResult f : s.flows()) {
                assertThat(f.counts().received()).as("flow %d", f.flow()).isEqualTo(f.counts().sent()).isPositive();
                assertThat(f.counts().lost()).isZero();
            }
        }
    }

    /** Without a punch nothing connects: awaitPunches returns the flows, and a step is refused before any data. */
    @Test
    @Timeout(60)
    void withoutAPunchTheFlowsStayUnreachedAndAStepIsRefused() throws Exception {
        Plan plan = AeronRuns.plan(2, 44830, List.of("1k"), 300, 0);
        MessageAuth key = MessageAuth.random();
        try (ReceiverEndpoint rx = receiver(plan, key);
             SenderEndpoint tx = sender(plan, key, SenderSpec.Reach.BEHIND_NAT)) {
            int[] control = tx.sourcePorts();
            assertThat(control).hasSize(2).doesNotContain(0, 44830, 44831);
            assertThat(((AeronSender) tx).publication(0).channel()).as("dynamic MDC with unicast's flow control")
                .isEqualTo("aeron:udp?control=127.0.0.1:0|control-mode=dynamic|mtu=1408|term-length=64k|session-id="
                    + AeronSessions.request(key, 0) + "|fc=max,rrwm:16");
            // The receivers listen on the plan's ports, as they do without a NAT: nothing reaches the publications.
            assertThat(tx.awaitPunches(TimeUnit.MILLISECONDS.toNanos(300))).containsExactly(0, 1);
            assertThatThrownBy(() -> tx.beginStep(0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("flow 0 (control port " + control[0] + ")").hasMessageContaining("not connected");

            AeronReceiver receiver = (AeronReceiver) rx;
            receiver.punch(0, new InetSocketAddress(LOOPBACK, control[0]), new byte[Punch.BYTES]);
            await("flow 0 reached", () -> ((AeronSender) tx).publication(0).isConnected());
            assertThat(tx.awaitPunches(TimeUnit.MILLISECONDS.toNanos(100))).as("flow 0 punched, flow 1 not")
                .containsExactly(1);
            assertThat(receiver.subscription(0).channel()).isEqualTo("aeron:udp?endpoint=127.0.0.1:44830|control="
                + "127.0.0.1:" + control[0] + "|session-id=" + AeronSessions.request(key, 0) + "|group=false");
            assertThatThrownBy(() -> tx.beginStep(0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("flow 1 (control port " + control[1] + ")");
            io.aeron.Subscription punched = receiver.subscription(0);
            receiver.punch(0, new InetSocketAddress(LOOPBACK, control[0]), new byte[Punch.BYTES]);
            assertThat(receiver.subscription(0)).as("punched again: left as it was").isSameAs(punched);
            receiver.punch(1, new InetSocketAddress(LOOPBACK, control[1]), new byte[Punch.BYTES]);
            assertThat(tx.awaitPunches(PUNCH_DEADLINE_NS)).isEmpty();
            tx.beginStep(0);
        }
    }

    /**
     * The control port takes status messages from the target's address only: one from another address adds no
     * destination and is counted, while one forged from the target's address (another port) is the residual risk:
     * it adds a second destination, and the next step is refused.
     */
    @Test
    @Timeout(60)
    void statusMessagesFromElsewhereAddNoDestinationAndASecondDestinationRefusesTheStep() throws Exception {
        Plan plan = AeronRuns.plan(1, 44834, List.of("1k"), 300, 0);
        MessageAuth key = MessageAuth.random();
        try (ReceiverEndpoint rx = receiver(plan, key);
             SenderEndpoint tx = sender(plan, key, SenderSpec.Reach.BEHIND_NAT);
             DatagramSocket elsewhere = new DatagramSocket(new InetSocketAddress("127.0.0.2", 0));
             DatagramSocket samePlace = new DatagramSocket(new InetSocketAddress(LOOPBACK, 0))) {
            AeronSender sender = (AeronSender) tx;
            ExclusivePublication publication = sender.publication(0);
            InetSocketAddress control = new InetSocketAddress(LOOPBACK, tx.sourcePorts()[0]);
            byte[] sm = AeronSpoofedControlTest.setupRequest(publication.sessionId(), publication.streamId(),
                publication.initialTermId()).array();
            elsewhere.send(new DatagramPacket(sm, sm.length, control));
            await("the status message from 127.0.0.2 dropped", () -> sender.controlRefused(0) == 1);
            assertThat(sender.destinationCount(0)).isZero();
            assertThat(publication.isConnected()).isFalse();

            ((AeronReceiver) rx).punch(0, control, new byte[Punch.BYTES]);
            assertThat(tx.awaitPunches(PUNCH_DEADLINE_NS)).isEmpty();
            assertThat(sender.destinationCount(0)).isEqualTo(1);
            tx.beginStep(0);
            tx.endStep();

            samePlace.send(new DatagramPacket(sm, sm.length, control));
            await("a second destination", () -> sender.destinationCount(0) == 2);
            assertThatThrownBy(() -> tx.beginStep(1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("2 destinations");
        }
    }

    /** Without a NAT the publication's channel is today's: unicast to the receiver's port, no control port. */
    @Test
    @Timeout(60)
    void sendersNotBehindANatKeepTheirUnicastChannel() throws Exception {
        Plan plan = AeronRuns.plan(1, 44836, List.of("1k"), 300, 0);
        MessageAuth key = MessageAuth.random();
        for (SenderSpec.Reach reach : List.of(SenderSpec.Reach.DIRECT, SenderSpec.Reach.PUNCHES)) {
            try (ReceiverEndpoint rx = receiver(plan, key);
                 SenderEndpoint tx = sender(plan, key, reach)) {
                ExclusivePublication publication = ((AeronSender) tx).publication(0);
                assertThat(publication.channel()).as(reach.name()).isEqualTo("aeron:udp?endpoint=127.0.0.1:44836"
                    + "|mtu=1408|term-length=64k|session-id=" + AeronSessions.request(key, 0));
                assertThat(tx.sourcePorts()).as("takes no punches").isEmpty();
                assertThat(publication.isConnected()).as("connected when opened").isTrue();
            }
        }
    }

    private static final Map<String, String> SMALL_TERMS = Map.of(AeronOptions.TERM_LENGTH_OPTION.key(), "64k");

    /** Receivers on the plan's ports on a driver of their own, taking data from loopback only. */
    private static ReceiverEndpoint receiver(Plan plan, MessageAuth key) throws Exception {
        FlowReceiver[] flows = new FlowReceiver[plan.ports()];
        for (int i = 0; i < flows.length; i++) {
            flows[i] = new FlowReceiver(i, 7, plan.messageSize(), plan.stepsPerTransport(), false, key);
        }
        return new AeronTransport().openReceiver(new ReceiverSpec(plan, LOOPBACK, flows, SMALL_TERMS, null,
            LOOPBACK));
    }

    private static SenderEndpoint sender(Plan plan, MessageAuth key, SenderSpec.Reach reach) throws Exception {
        return new AeronTransport().openSender(new SenderSpec(plan, LOOPBACK, 7, SMALL_TERMS, key).reaching(reach));
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        org.agrona.concurrent.IdleStrategy idle = AeronDriver.networkIdle();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            idle.idle();
        }
    }

    /**
     * {@code side} whose {@code reachFrom} punches as {@code RemoteSendSide.reachFrom} does: every flow still
     * unreached is punched, then the sender waits up to 200 ms for its status messages, until a deadline.
     */
    private static SendSide punchingFirst(LocalSendSide side, List<int[]> controlPorts) {
        return (SendSide) Proxy.newProxyInstance(AeronBehindNatTest.class.getClassLoader(),
            new Class<?>[] {SendSide.class}, (proxy, method, args) -> {
                if (method.getName().equals("reachFrom")) {
                    reach(side, (ReceiveSide) args[0], (MessageAuth) args[1], (int) args[2], controlPorts);
                    return null;
                }
                try {
                    return method.invoke(side, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            });
    }

    private static void reach(LocalSendSide side, ReceiveSide receivers, MessageAuth passKey, int runId,
                              List<int[]> controlPorts) throws Exception {
        int[] ports = side.sourcePorts();
        controlPorts.add(ports);
        Punch punch = new Punch(passKey, runId, ports.length);
        int[] missing = java.util.stream.IntStream.range(0, ports.length).toArray();
        long deadline = System.nanoTime() + PUNCH_DEADLINE_NS;
        while (missing.length > 0) {
            assertThat(System.nanoTime()).as("every flow reached").isLessThan(deadline);
            for (int f : missing) {
                receivers.localEndpoint().punch(f, new InetSocketAddress(LOOPBACK, ports[f]), punch.encode(f));
            }
            missing = side.awaitPunches(TimeUnit.MILLISECONDS.toNanos(200));
        }
    }
}
