package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import io.lossprobe.core.wire.Punch;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * UDP senders that send only where their receivers' punches came from ({@code SenderSpec.Reach.PUNCHES}: every
 * reverse run, and the way back in through a NAT): on both send paths, a flow's destination is the source of its
 * first punch that verifies, from the target's address, on its own socket; everything else that arrives is ignored,
 * and the data goes to the punch's source port, never to the plan's.
 */
class UdpPunchTest {
    private static final int RUN = 41;
    private static final long WAIT_NS = TimeUnit.MILLISECONDS.toNanos(300);

    @ParameterizedTest(name = "udp.send={0}")
    @ValueSource(strings = {"native", "netty"})
    @Timeout(30)
    void aFlowSendsWhereItsFirstVerifiedPunchCameFromAndNowhereElse(String send) throws Exception {
        MessageAuth runKey = MessageAuth.random();
        try (DatagramSocket rx0 = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
             DatagramSocket rx1 = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
             DatagramSocket stranger = new DatagramSocket(new InetSocketAddress("127.0.0.2", 0));
             DatagramSocket late = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
             DatagramChannel planPort = DatagramChannel.open()) {
            planPort.bind(new InetSocketAddress("127.0.0.1", 0));
            planPort.configureBlocking(false);
            int base = ((InetSocketAddress) planPort.getLocalAddress()).getPort();
            Plan plan = new Plan(List.of("udp"), 2, base, List.of(Level.parse("1k")),
                TimeUnit.MILLISECONDS.toNanos(100), 0, TimeUnit.MILLISECONDS.toNanos(100), 64, "127.0.0.1");
            MessageAuth passKey = runKey.forPass("udp", 64); // what a sender's spec carries
            UdpSender sender = UdpSender.open(new SenderSpec(plan, "127.0.0.1", RUN, Map.of("udp.send", send,
                "udp.gso", "off"), passKey).reaching(SenderSpec.Reach.PUNCHES));
            try {
                Punch punch = new Punch(passKey, RUN, 2);
                int[] ports = sender.sourcePorts();
                assertThat(ports).hasSize(2).doesNotContain(0, base);
                InetSocketAddress to0 = new InetSocketAddress(InetAddress.getLoopbackAddress(), ports[0]);
                InetSocketAddress to1 = new InetSocketAddress(InetAddress.getLoopbackAddress(), ports[1]);

                send(stranger, punch.encode(0), to0); // a good punch from another host: could aim the data anywhere
                send(rx0, new Punch(passKey, RUN + 1, 2).encode(0), to0); // another run's
                send(rx0, new Punch(runKey.forPass("udp", 128), RUN, 2).encode(0), to0); // another pass's
                byte[] altered = punch.encode(0);
                altered[20] ^= 1;
                send(rx0, altered, to0);
                byte[] longer = java.util.Arrays.copyOf(punch.encode(0), Punch.BYTES + 1);
                send(rx0, longer, to0);
                send(rx0, java.util.Arrays.copyOf(punch.encode(0), Punch.BYTES - 1), to0);
                if (send.equals("netty")) {
                    send(rx1, punch.encode(1), to0); // flow 1's punch on flow 0's socket
                }
                assertThat(sender.awaitPunches(WAIT_NS)).as("no verified punch yet").containsExactly(0, 1);
                assertThatThrownBy(() -> sender.beginStep(0)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("no punch");

                send(rx0, punch.encode(0), to0);
                assertThat(sender.awaitPunches(WAIT_NS)).containsExactly(1);
                send(late, punch.encode(0), to0); // a second punch for flow 0, from another port: the first holds
                send(rx1, punch.encode(1), to1);
                assertThat(sender.awaitPunches(WAIT_NS)).isEmpty();

                sender.beginStep(0);
                for (int flow = 0; flow < 2; flow++) {
                    MessageWriter w = sender.writer(flow);
                    sender.sendExecutor().submit(() -> {
                        for (int seq = 0; seq < 2; seq++) {
                            w.write(seq, MessageHeader.word1(RUN, 0, 64), 0, 0, 0, 0);
                        }
                        w.flush();
                        return null;
                    }).get(10, TimeUnit.SECONDS);
                }
                for (DatagramSocket rx : List.of(rx0, rx1)) {
                    rx.setSoTimeout(10_000);
                    for (int seq = 0; seq < 2; seq++) {
                        DatagramPacket p = new DatagramPacket(new byte[2048], 2048);
                        rx.receive(p);
                        assertThat(p.getLength()).isEqualTo(64);
                        assertThat(p.getPort()).isEqualTo(ports[rx == rx0 ? 0 : 1]);
                    }
                }
                late.setSoTimeout(1);
                assertThat(receivesNothing(late)).as("the second punch's socket").isTrue();
                assertThat(planPort.receive(ByteBuffer.allocate(2048))).as("the plan's port").isNull();
            } finally {
                sender.close();
            }
        }
    }

    private static void send(DatagramSocket from, byte[] datagram, InetSocketAddress to) throws Exception {
        from.send(new DatagramPacket(datagram, datagram.length, to));
    }

    private static boolean receivesNothing(DatagramSocket s) throws Exception {
        try {
            s.receive(new DatagramPacket(new byte[2048], 2048));
            return false;
        } catch (java.net.SocketTimeoutException e) {
            return true;
        }
    }
}
