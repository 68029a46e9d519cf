package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.aeron.protocol.HeaderFlyweight;
import io.aeron.protocol.SetupFlyweight;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageAuth;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Map;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A spoofed 40-byte Aeron SETUP frame to a receiver port made the media driver answer with status messages to
 * whatever address the frame came from (about 45x the bytes, and a bogus image per frame): a reflector. With the
 * receivers' source filter (between hosts: the controller's address only), the frame never reaches the driver;
 * without it, the driver answers, which this test shows first, so the check can fail.
 */
@Tag("system")
class AeronSpoofedSetupTest {
    private static final int PORT = 43900;

    private static byte[] setupFrame(int streamId, int sessionId) {
        UnsafeBuffer b = new UnsafeBuffer(new byte[SetupFlyweight.HEADER_LENGTH]);
        SetupFlyweight setup = new SetupFlyweight(b);
        setup.version(HeaderFlyweight.CURRENT_VERSION).flags((short) 0).headerType(HeaderFlyweight.HDR_TYPE_SETUP)
            .frameLength(SetupFlyweight.HEADER_LENGTH);
        setup.termOffset(0).sessionId(sessionId).streamId(streamId).initialTermId(7).activeTermId(7)
            .termLength(1 << 16).mtuLength(1408).ttl(0);
        return b.byteArray();
    }

    /** Sends one SETUP from a socket on 127.0.0.1; true when anything comes back within 1 s. */
    private static boolean setupGetsAnAnswer(String peer, int port) throws Exception {
        Plan plan = new Plan(List.of("aeron"), 1, port, List.of(io.lossprobe.core.plan.Level.parse("1k")),
            1_000_000_000L, 0, 1_000_000_000L, 64, "127.0.0.1");
        MessageAuth key = MessageAuth.random();
        FlowReceiver[] flows = {new FlowReceiver(0, 1, 64, 1, false, key)};
        AeronTransport transport = new AeronTransport();
        try (ReceiverEndpoint rx = transport.openReceiver(new ReceiverSpec(plan, "127.0.0.1", flows,
                 Map.of(AeronOptions.TERM_LENGTH_OPTION.key(), "64k"), null, peer));
             DatagramSocket attacker = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0))) {
            rx.beginStep(0);
            // The flow's own session: a frame of any other is dropped by the session filter
            // (AeronSpoofedSessionTest), which is not what this test is about.
            byte[] frame = setupFrame(AeronOptions.streamId(0), AeronSessions.request(key, 0));
            attacker.send(new DatagramPacket(frame, frame.length, InetAddress.getByName("127.0.0.1"), port));
            attacker.setSoTimeout(1_000);
            boolean answered;
            try {
                attacker.receive(new DatagramPacket(new byte[2048], 2048));
                answered = true;
            } catch (SocketTimeoutException e) {
                answered = false;
            }
            TransportReport report = rx.endStep();
            if (peer != null) {
                assertThat(report.flow(0)).containsEntry(TransportReport.FOREIGN, 1L);
            }
            return answered;
        }
    }

    @Test
    @Timeout(60)
    void aSpoofedSetupFromAnotherAddressGetsNoPacketBack() throws Exception {
        assertThat(setupGetsAnAnswer(null, PORT)).as("without the filter the driver answers a SETUP").isTrue();
        assertThat(setupGetsAnAnswer("127.0.0.2", PORT + 1)).as("with it, nothing comes back").isFalse();
    }
}
