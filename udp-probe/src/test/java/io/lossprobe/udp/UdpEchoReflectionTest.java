package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.wire.MessageHeader;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A server's UDP echo answers only its controller's address: a spoofed source is counted, never answered. */
@Tag("system")
class UdpEchoReflectionTest {
    private static final int RUN = 4242;
    private static final int PORT = 41900;

    private static byte[] request(long seq) {
        ByteBuffer b = ByteBuffer.allocate(64);
        b.putLong(MessageHeader.word0(MessageHeader.KIND_DATA, 0)).putLong(MessageHeader.word1(RUN, 0, 64))
            .putLong(seq).putLong(System.nanoTime());
        return b.array();
    }

    @Test
    @Timeout(60)
    void repliesGoOnlyToTheController() throws Exception {
        Plan plan = new Plan(List.of("udp"), 1, PORT, List.of(Level.parse("1k")), 1_000_000_000L, 0, 1_000_000_000L,
            64, "127.0.0.1", Plan.ECHO, 0);
        FlowReceiver flow = new FlowReceiver(0, RUN, 64, 1);
        try (ReceiverEndpoint rx = new UdpTransport().openReceiver(
                 new ReceiverSpec(plan, "127.0.0.1", new FlowReceiver[] {flow}, Map.of(), "127.0.0.1"));
             DatagramSocket controller = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
             DatagramSocket stranger = new DatagramSocket(new InetSocketAddress("127.0.0.2", 0))) {
            rx.onReceiveThread(() -> flow.beginStep(0, 4096));
            rx.beginWindow();
            InetSocketAddress server = new InetSocketAddress(InetAddress.getByName("127.0.0.1"), PORT);
            stranger.send(new DatagramPacket(request(0), 64, server));
            controller.send(new DatagramPacket(request(1), 64, server));

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (flow.progress() < 2) {
                assertThat(System.nanoTime()).as("both requests counted").isLessThan(deadline);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            controller.setSoTimeout(10_000);
            DatagramPacket reply = new DatagramPacket(new byte[128], 128);
            controller.receive(reply); // the controller's request is answered
            ByteBuffer r = ByteBuffer.wrap(reply.getData(), 0, reply.getLength());
            assertThat(MessageHeader.kind(r.getLong(0))).isEqualTo(MessageHeader.KIND_ECHO);
            assertThat(r.getLong(16)).isEqualTo(1);

            rx.onReceiveThread(() -> flow.closeStep(2));
            assertThat(rx.endStep().counters()).containsEntry("udp.repliesDropped", 1L); // the stranger's was not
        }
    }
}
