package io.lossprobe.tcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.engine.LocalSendSide;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.ReceiveSideFactory;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.SendSide;
import io.lossprobe.core.engine.SendSideFactory;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.Punch;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * TCP senders whose receivers are behind a NAT ({@code SenderSpec.Reach.BEHIND_NAT}): they listen, and the
 * receivers connect out to them with their punch first. Real sockets on loopback, the NAT's address 127.0.0.1;
 * a hostile host at 127.0.0.2. Ports 44800-44812.
 */
@Tag("system")
class TcpBehindNatTest {
    private static final String LOOPBACK = "127.0.0.1";
    private static final int RUN_ID = 0x5a7;
    private static final long PUNCH_DEADLINE_NS = TimeUnit.SECONDS.toNanos(5);

    /**
     * A step's counts are exact over connections the receivers opened: before the punches the senders have no
     * connection at all (they did not connect), after them every flow's data arrives, nothing lost, and each
     * receiver took exactly its one connection.
     */
    @Test
    @Timeout(60)
    void aStepOverPunchedConnectionsIsExact() throws Exception {
        Plan plan = TcpRuns.plan(4, 44800, List.of(Level.of(4_000), Level.of(8_000)), 500, 500, 64);
        RunResult result = new RunEngine(plan, Map.of("tcp", new TcpTransport()), Map.of(), new RunListener() {
        }, StepHooks.NONE, ReceiveSideFactory.local(LOOPBACK), behindNat((side, receiver, passKey) -> {
            assertThat(side.sourcePorts()).hasSize(4).doesNotContain(44800, 44801, 44802, 44803);
            assertThat(side.awaitPunches(0)).as("no flow has a connection before its punch").containsExactly(0, 1,
                2, 3);
            punchAll(side, receiver, passKey, plan.ports());
        }), RUN_ID).run();

        TransportContractTest.assertIdentities(result);
        assertThat(result.steps()).hasSize(2);
        for (StepResult step : result.steps()) {
            assertThat(step.counts().sent()).as("step %d", step.step()).isEqualTo(step.counts().scheduled())
                .isEqualTo(step.step() == 0 ? 2_000 : 4_000);
            assertThat(step.counts().received()).isEqualTo(step.counts().sent());
            assertThat(step.counts().lost()).isZero();
            assertThat(step.counts().sendFailed() + step.counts().behind() + step.counts().foreign()).isZero();
        }
        for (FlowResult f : result.steps().get(0).flows()) {
            assertThat(f.transport()).as("flow %d", f.flow())
                .containsEntry(TcpCounter.CONNECTIONS_ACCEPTED.key, 1L)
                .containsEntry(TcpCounter.CONNECTIONS_REFUSED.key, 0L)
                .containsEntry(TcpCounter.CONNECTION_FAILURES.key, 0L)
                .containsKey(TcpCounter.TOTAL_RETRANS.key);
        }
    }

    /**
     * Every hostile connection is reset without a byte and none becomes the flow's: a token that is garbage, cut
     * short, too long, another flow's, another run's or another pass's, a good token from another address, and a
     * replay of a flow's real punch once it has its connection. Then the real punches still work and a step is
     * exact (a hijacked flow would lose its messages to the hostile socket).
     */
    @Test
    @Timeout(90)
    void hostileConnectionsAreResetAndTheRealPunchStillWorks() throws Exception {
        Plan plan = TcpRuns.plan(2, 44804, List.of(Level.of(4_000)), 500, 500, 64);
        RunResult result = new RunEngine(plan, Map.of("tcp", new TcpTransport()), Map.of(), new RunListener() {
        }, StepHooks.NONE, ReceiveSideFactory.local(LOOPBACK), behindNat((side, receiver, passKey) -> {
            int[] ports = side.sourcePorts();
            Punch punch = new Punch(passKey, RUN_ID, 2);
            byte[] good = punch.encode(0);
            byte[] garbage = new byte[Punch.BYTES];
            new java.util.Random(7).nextBytes(garbage);
            byte[] altered = good.clone();
            altered[Punch.BYTES - 1] ^= 1;
            byte[] longer = Arrays.copyOf(good, Punch.BYTES + 1);
            List<byte[]> hostile = List.of(garbage, altered, Arrays.copyOf(good, Punch.BYTES - 1), longer,
                punch.encode(1), new Punch(passKey, RUN_ID + 1, 2).encode(0),
                new Punch(MessageAuth.random(), RUN_ID, 2).encode(0));
            for (byte[] token : hostile) {
                assertResetWithoutAByte(LOOPBACK, ports[0], token);
                assertThat(side.awaitPunches(0)).as("flow 0 still without its connection").contains(0);
            }
            assertResetWithoutAByte("127.0.0.2", ports[0], good);
            assertThat(side.awaitPunches(0)).as("a good token from another address is no punch").contains(0);

            receiver.punch(0, new InetSocketAddress(LOOPBACK, ports[0]), good);
            awaitMissing(side::awaitPunches, 1);
            assertResetWithoutAByte(LOOPBACK, ports[0], good); // a replay: flow 0 has its connection
            receiver.punch(1, new InetSocketAddress(LOOPBACK, ports[1]), punch.encode(1));
            assertThat(side.awaitPunches(PUNCH_DEADLINE_NS)).isEmpty();
        }), RUN_ID).run();

        TransportContractTest.assertIdentities(result);
        StepResult step = result.steps().get(0);
        assertThat(step.counts().sent()).isEqualTo(step.counts().scheduled()).isEqualTo(2_000);
        assertThat(step.counts().received()).isEqualTo(2_000);
        assertThat(step.counts().lost() + step.counts().sendFailed() + step.counts().foreign()).isZero();
    }

    /** A flow whose receiver never punched: awaitPunches names it and no step begins. */
    @Test
    @Timeout(30)
    void aFlowWithoutAPunchIsReportedAndNoStepBegins() throws Exception {
        try (Ends ends = new Ends(44808)) {
            TcpSender sender = ends.sender;
            int[] ports = sender.sourcePorts();
            assertThat(ports).hasSize(2);
            ends.receiver.punch(0, new InetSocketAddress(LOOPBACK, ports[0]), ends.punch.encode(0));
            awaitMissing(sender::awaitPunches, 1);
            long waited = System.nanoTime();
            assertThat(sender.awaitPunches(TimeUnit.MILLISECONDS.toNanos(300))).containsExactly(1);
            assertThat(System.nanoTime() - waited).as("it waited for the deadline")
                .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(300));
            assertThatThrownBy(() -> sender.beginStep(0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("[1]");
        }
    }

    /**
     * The controller punches every flow still missing again and again: a flow whose connection is being made or is
     * up gets no second one, and only a failed attempt (nobody listening there) is made again.
     */
    @Test
    @Timeout(30)
    void aPunchAgainOpensNoSecondConnectionAndOnlyAFailedOneIsMadeAgain() throws Exception {
        try (Ends ends = new Ends(44811)) {
            TcpReceiver receiver = ends.receiver;
            TcpSender sender = ends.sender;
            int[] ports = sender.sourcePorts();
            Punch punch = ends.punch;
            // A port bound but not listening refuses a connect. It stays bound until the refusal: a port freed
            // before is what bind(0) hands the punch's own socket next (a third of the time here), and a connect
            // from a port to itself succeeds (TCP simultaneous open), so the "refused" connect would come up.
            try (java.net.Socket closed = new java.net.Socket()) {
                closed.setReuseAddress(false);
                closed.bind(new InetSocketAddress(LOOPBACK, 0));
                receiver.punch(1, new InetSocketAddress(LOOPBACK, closed.getLocalPort()), punch.encode(1));
                for (int i = 0; i < 3; i++) {
                    receiver.punch(0, new InetSocketAddress(LOOPBACK, ports[0]), punch.encode(0));
                }
                long deadline = System.nanoTime() + PUNCH_DEADLINE_NS;
                while (receiver.punching(1)) {
                    assertThat(System.nanoTime()).as("the refused connect ends within 5 s").isLessThan(deadline);
                    Thread.onSpinWait();
                }
            }
            awaitMissing(sender::awaitPunches, 1);
            receiver.punch(0, new InetSocketAddress(LOOPBACK, ports[0]), punch.encode(0)); // up: nothing again
            receiver.punch(1, new InetSocketAddress(LOOPBACK, ports[1]), punch.encode(1)); // failed: again
            assertThat(sender.awaitPunches(PUNCH_DEADLINE_NS)).isEmpty();
            assertThat(receiver.connections(0)).isEqualTo(1);
            assertThat(receiver.connections(1)).isEqualTo(1);
            assertThat(sender.punchesRefused()).as("no second connection reached the sender").isZero();
        }
    }

    /** Not behind a NAT the senders connect as ever, with punches asked for or not: they take none. */
    @Test
    @Timeout(30)
    void sendersNotBehindANatConnectAndTakeNoPunches() throws Exception {
        Plan plan = TcpRuns.plan(1, 44810, List.of(Level.of(1_000)), 200, 200, 64);
        MessageAuth key = MessageAuth.random();
        FlowReceiver[] flows = {new FlowReceiver(0, RUN_ID, 64, 1, false, key)};
        TcpReceiver receiver = TcpReceiver.open(new ReceiverSpec(plan, LOOPBACK, flows, Map.of(), null, LOOPBACK),
            TcpSettings.from(Map.of()));
        try {
            for (SenderSpec.Reach reach : List.of(SenderSpec.Reach.DIRECT, SenderSpec.Reach.PUNCHES)) {
                TcpSender sender = TcpSender.open(new SenderSpec(plan, LOOPBACK, RUN_ID, Map.of(), key)
                    .reaching(reach), TcpSettings.from(Map.of()));
                try {
                    assertThat(sender.sourcePorts()).as("%s", reach).isEmpty();
                    assertThat(((InetSocketAddress) sender.channel(0).remoteAddress()).getPort()).isEqualTo(44810);
                    assertThatThrownBy(() -> sender.awaitPunches(0))
                        .isInstanceOf(UnsupportedOperationException.class);
                } finally {
                    sender.close();
                }
            }
        } finally {
            receiver.close();
        }
    }

    /** What a test does between the sides' opening and the first step, in place of the control channel's. */
    @FunctionalInterface
    private interface Reach {
        void punch(LocalSendSide side, ReceiverEndpoint receiver, MessageAuth passKey) throws Exception;
    }

    /**
     * Senders in this process opened as behind a NAT, whose {@code reachFrom} is {@code reach}: a stand-in for the
     * controller's punching ({@code RemoteSendSide.reachFrom}) and the server's {@code punched} answers.
     */
    private static SendSideFactory behindNat(Reach reach) {
        return (transport, plan, runId, auth, options) -> {
            LocalSendSide side = LocalSendSide.open(transport, new SenderSpec(plan, LOOPBACK, runId, options, auth)
                .reaching(SenderSpec.Reach.BEHIND_NAT));
            return (SendSide) Proxy.newProxyInstance(TcpBehindNatTest.class.getClassLoader(),
                new Class<?>[] {SendSide.class}, (proxy, method, args) -> {
                    if (method.getName().equals("reachFrom")) {
                        reach.punch(side, ((ReceiveSide) args[0]).localEndpoint(), (MessageAuth) args[1]);
                        return null;
                    }
                    try {
                        return method.invoke(side, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        };
    }

    /** As the controller does: punches every flow still missing, asks again, until none is or the deadline. */
    private static void punchAll(LocalSendSide side, ReceiverEndpoint receiver, MessageAuth passKey, int flows)
        throws Exception {
        Punch punch = new Punch(passKey, RUN_ID, flows);
        int[] ports = side.sourcePorts();
        long deadline = System.nanoTime() + PUNCH_DEADLINE_NS;
        int[] missing = IntStream.range(0, flows).toArray();
        while (missing.length > 0) {
            assertThat(System.nanoTime() - deadline).as("every flow punched within 5 s").isNegative();
            for (int f : missing) {
                receiver.punch(f, new InetSocketAddress(LOOPBACK, ports[f]), punch.encode(f));
            }
            missing = side.awaitPunches(TimeUnit.MILLISECONDS.toNanos(200));
        }
    }

    /** {@code awaitPunches} of a sender. */
    @FunctionalInterface
    private interface Punches {
        int[] await(long timeoutNs) throws Exception;
    }

    /** Waits, up to 5 s, until exactly {@code expected} are the flows without a connection. */
    private static void awaitMissing(Punches punches, int... expected) throws Exception {
        long deadline = System.nanoTime() + PUNCH_DEADLINE_NS;
        int[] missing = punches.await(TimeUnit.MILLISECONDS.toNanos(100));
        while (!Arrays.equals(missing, expected)) {
            assertThat(System.nanoTime() - deadline).as("missing %s, not %s", Arrays.toString(expected),
                Arrays.toString(missing)).isNegative();
            missing = punches.await(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    /** A real receiver (its peer the NAT's address) and a sender opened as behind a NAT, two flows. */
    private static final class Ends implements AutoCloseable {
        final MessageAuth key = MessageAuth.random();
        final Punch punch = new Punch(key, RUN_ID, 2);
        final TcpReceiver receiver;
        final TcpSender sender;

        Ends(int basePort) throws Exception {
            Plan plan = TcpRuns.plan(2, basePort, List.of(Level.of(1_000)), 200, 200, 64);
            FlowReceiver[] flows = {new FlowReceiver(0, RUN_ID, 64, 1, false, key),
                new FlowReceiver(1, RUN_ID, 64, 1, false, key)};
            receiver = TcpReceiver.open(new ReceiverSpec(plan, LOOPBACK, flows, Map.of(), null, LOOPBACK),
                TcpSettings.from(Map.of()));
            sender = TcpSender.open(new SenderSpec(plan, LOOPBACK, RUN_ID, Map.of(), key)
                .reaching(SenderSpec.Reach.BEHIND_NAT), TcpSettings.from(Map.of()));
        }

        @Override
        public void close() {
            sender.close();
            receiver.close();
        }
    }

    /**
     * Connects from {@code fromHost} to the sender's listener, writes {@code token} and reads: the sender must
     * reset (or close) the connection without writing a byte, within the punch's read deadline and some slack.
     */
    private static void assertResetWithoutAByte(String fromHost, int port, byte[] token) throws IOException {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName(fromHost), 0));
            try {
                s.connect(new InetSocketAddress(LOOPBACK, port), 5_000);
            } catch (SocketException e) {
                // On loopback the sender's reset can beat connect()'s own completion; a refused connect is no reset.
                assertThat(e).hasMessageContaining("reset");
                return;
            }
            s.setSoTimeout((int) TimeUnit.NANOSECONDS.toMillis(PunchedListeners.READ_DEADLINE_NS) + 4_000);
            int read;
            try {
                s.getOutputStream().write(token);
                InputStream in = s.getInputStream();
                read = in.read();
            } catch (SocketTimeoutException e) {
                throw new AssertionError("a connection from " + fromHost + " with a " + token.length
                    + "-byte token was left open", e);
            } catch (SocketException reset) {
                return; // reset: what the sender does
            }
            assertThat(read).as("the sender wrote nothing and closed").isEqualTo(-1);
        }
    }
}
