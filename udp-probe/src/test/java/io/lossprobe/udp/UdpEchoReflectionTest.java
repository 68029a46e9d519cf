package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.wire.MessageAuth;
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

    private static final MessageAuth KEY = MessageAuth.random();

    /** A request as the run's sender makes it: tagged under the run's key. */
    private static byte[] request(long seq) {
        return request(MessageHeader.KIND_DATA, seq);
    }

    private static byte[] request(int kind, long seq) {
        return TaggedRequests.of(KEY, RUN, kind, seq);
    }

    /**
     * Between hosts the responder takes data only from the controller's address and answers only the flow's
     * sender: a stranger's request (even one with a valid tag, say captured and replayed) is foreign, never
     * counted, never answered; a request from the controller's address but another port than the flow's sender
     * (a replay with a forged source port) is counted but not answered. The reply carries a tag that verifies.
     */
    @Test
    @Timeout(60)
    void repliesGoOnlyToTheFlowsSender() throws Exception {
        repliesGoOnlyToTheFlowsSender(Map.of()); // lossprobe's own reader where the native piece loads
        repliesGoOnlyToTheFlowsSender(Map.of("udp.timestamps", "user")); // Netty's reads
    }

    private void repliesGoOnlyToTheFlowsSender(Map<String, String> options) throws Exception {
        Plan plan = new Plan(List.of("udp"), 1, PORT, List.of(Level.parse("1k")), 1_000_000_000L, 0, 1_000_000_000L,
            64, "127.0.0.1", Plan.ECHO, 0);
        FlowReceiver flow = new FlowReceiver(0, RUN, 64, 1, false, KEY);
        try (ReceiverEndpoint rx = new UdpTransport().openReceiver(
                 new ReceiverSpec(plan, "127.0.0.1", new FlowReceiver[] {flow}, options, "127.0.0.1", "127.0.0.1"));
             DatagramSocket controller = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
             DatagramSocket otherPort = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
             DatagramSocket stranger = new DatagramSocket(new InetSocketAddress("127.0.0.2", 0))) {
            rx.beginStep(0);
            rx.onFlowThreads(i -> flow.beginStep(0, 4096));
            rx.beginWindow();
            InetSocketAddress server = new InetSocketAddress(InetAddress.getByName("127.0.0.1"), PORT);
            stranger.send(new DatagramPacket(request(0), 64, server));
            controller.send(new DatagramPacket(request(1), 64, server));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (flow.progress() < 1) {
                assertThat(System.nanoTime()).as("the controller's request counted").isLessThan(deadline);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            // A warm-up request from the other port first: answered as a warm-up would be, it is not (wrong port),
            // and a warm-up's unsent reply is not reply loss (warm-ups are never counted).
            otherPort.send(new DatagramPacket(request(MessageHeader.KIND_WARMUP, 0), 64, server));
            otherPort.send(new DatagramPacket(request(2), 64, server));
            while (flow.progress() < 2) {
                assertThat(System.nanoTime()).as("the other port's request counted").isLessThan(deadline);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            controller.setSoTimeout(10_000);
            DatagramPacket reply = new DatagramPacket(new byte[128], 128);
            controller.receive(reply); // the controller's request is answered
            ByteBuffer r = ByteBuffer.wrap(reply.getData(), 0, reply.getLength());
            long w0 = r.getLong(0);
            assertThat(MessageHeader.kind(w0)).isEqualTo(MessageHeader.KIND_ECHO);
            assertThat(r.getLong(16)).isEqualTo(1);
            assertThat(KEY.verify(w0, r.getLong(8), r.getLong(16), r.getLong(24), r.getLong(32), r.getLong(40)))
                .as("the reply's tag").isTrue();

            FlowReceiver.Summary[] closed = new FlowReceiver.Summary[1];
            rx.onFlowThreads(i -> closed[0] = flow.closeStep(3));
            io.lossprobe.core.transport.TransportReport report = rx.endStep();
            // the other port's data request was not answered; its warm-up was not either, and does not count
            assertThat(report.counters()).containsEntry(io.lossprobe.core.transport.EchoReplies.DROPPED, 1L)
                .containsEntry(io.lossprobe.core.transport.EchoReplies.SENT, 1L);
            assertThat(report.flow(0)).containsEntry(io.lossprobe.core.transport.EchoReplies.DROPPED, 1L);
            assertThat(report.flow(0)).containsEntry(io.lossprobe.core.transport.TransportReport.FOREIGN, 1L);
            assertThat(closed[0].received()).isEqualTo(2);
            otherPort.setSoTimeout(300);
            assertThat(receivesNothing(otherPort)).isTrue();
        }
    }

    private static boolean receivesNothing(DatagramSocket s) throws java.io.IOException {
        try {
            s.receive(new DatagramPacket(new byte[128], 128));
            return false;
        } catch (java.net.SocketTimeoutException e) {
            return true;
        }
    }
}
