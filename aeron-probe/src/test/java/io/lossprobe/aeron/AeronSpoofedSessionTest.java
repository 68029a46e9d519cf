package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.aeron.AeronCounters;
import io.aeron.driver.status.StreamCounter;
import io.aeron.protocol.DataHeaderFlyweight;
import io.aeron.protocol.HeaderFlyweight;
import io.aeron.protocol.SetupFlyweight;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageAuth;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A spoofer that uses the controller's address (on loopback: 127.0.0.1, the address the receivers' source filter
 * allows) opens an Aeron session of its own on a flow's stream: a SETUP, then a data frame with a gap before it. Before
 * the session filter the driver made an image of it, answered the spoofer with status messages and a NAK, and the
 * image's NAK and loss-report figures were added to the flow's. Now the flow takes only its sender's session (derived
 * from the pass's key on both ends): the spoofer gets nothing back, the flow's counters stay at the real session's,
 * and the frames are counted as foreign, the SETUP as a refused image, with a step warning.
 */
@Tag("system")
class AeronSpoofedSessionTest {
    private static final int PORT = 43910;
    private static final int SPOOF_SESSION = 0x5afe;
    private static final int TERM_ID = 7;

    private static byte[] setupFrame(int streamId) {
        UnsafeBuffer b = new UnsafeBuffer(new byte[SetupFlyweight.HEADER_LENGTH]);
        SetupFlyweight setup = new SetupFlyweight(b);
        setup.version(HeaderFlyweight.CURRENT_VERSION).flags((short) 0).headerType(HeaderFlyweight.HDR_TYPE_SETUP)
            .frameLength(SetupFlyweight.HEADER_LENGTH);
        setup.termOffset(0).sessionId(SPOOF_SESSION).streamId(streamId).initialTermId(TERM_ID).activeTermId(TERM_ID)
            .termLength(1 << 16).mtuLength(1408).ttl(0);
        return b.byteArray();
    }

    /** One 64-byte data frame at {@code termOffset}: everything before it is a gap the receiving driver NAKs. */
    private static byte[] dataFrame(int streamId, int termOffset) {
        int length = DataHeaderFlyweight.HEADER_LENGTH + 32;
        UnsafeBuffer b = new UnsafeBuffer(new byte[length]);
        DataHeaderFlyweight data = new DataHeaderFlyweight(b);
        data.version(HeaderFlyweight.CURRENT_VERSION).flags(DataHeaderFlyweight.BEGIN_AND_END_FLAGS)
            .headerType(HeaderFlyweight.HDR_TYPE_DATA).frameLength(length);
        data.termOffset(termOffset).sessionId(SPOOF_SESSION).streamId(streamId).termId(TERM_ID);
        return b.byteArray();
    }

    /** The header types of the frames that reach {@code socket} within {@code timeoutMs}, up to the first NAK. */
    private static List<Integer> answers(DatagramSocket socket, long timeoutMs) throws Exception {
        List<Integer> types = new ArrayList<>();
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        byte[] buffer = new byte[2048];
        while (!types.contains(HeaderFlyweight.HDR_TYPE_NAK)) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                break;
            }
            socket.setSoTimeout((int) left);
            DatagramPacket p = new DatagramPacket(buffer, buffer.length);
            try {
                socket.receive(p);
            } catch (SocketTimeoutException e) {
                break;
            }
            if (p.getLength() >= HeaderFlyweight.MIN_HEADER_LENGTH) {
                types.add(new UnsafeBuffer(buffer).getShort(HeaderFlyweight.TYPE_FIELD_OFFSET,
                    ByteOrder.LITTLE_ENDIAN) & 0xFFFF);
            }
        }
        return types;
    }

    /** The sessions the driver has images of on {@code streamId} (one receiver position counter each). */
    private static Set<Integer> imageSessions(AeronDriver driver, int streamId) {
        Set<Integer> sessions = new TreeSet<>();
        driver.aeron().countersReader().forEach((id, type, key, label) -> {
            if (type == AeronCounters.DRIVER_RECEIVER_HWM_TYPE_ID
                && key.getInt(StreamCounter.STREAM_ID_OFFSET) == streamId) {
                sessions.add(key.getInt(StreamCounter.SESSION_ID_OFFSET));
            }
        });
        return sessions;
    }

    @Test
    @Timeout(60)
    void aSpoofedSessionFromTheControllersAddressMakesNoImageAndAddsNothingToTheFlow() throws Exception {
        Plan plan = new Plan(List.of("aeron"), 1, PORT, List.of(Level.parse("1k")), 1_000_000_000L, 0,
            1_000_000_000L, 64, "127.0.0.1");
        MessageAuth key = MessageAuth.random();
        FlowReceiver[] flows = {new FlowReceiver(0, 1, 64, 1, false, key)};
        Map<String, String> options = Map.of(AeronOptions.TERM_LENGTH_OPTION.key(), "64k");
        AeronTransport transport = new AeronTransport();
        int streamId = AeronOptions.streamId(0);
        try (ReceiverEndpoint rx = transport.openReceiver(new ReceiverSpec(plan, "127.0.0.1", flows, options, null,
                 "127.0.0.1"));
             SenderEndpoint tx = transport.openSender(new SenderSpec(plan, "127.0.0.1", 1, options, key));
             DatagramSocket spoofer = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0))) {
            AeronDriver driver = ((AeronReceiver) rx).driver();
            Set<Integer> real = imageSessions(driver, streamId);
            assertThat(real).as("the sender's session has its image").hasSize(1).doesNotContain(SPOOF_SESSION);
            rx.beginStep(0);
            InetAddress target = InetAddress.getByName("127.0.0.1");
            byte[] setup = setupFrame(streamId);
            spoofer.send(new DatagramPacket(setup, setup.length, target, PORT));
            // Before the filter a status message answered the SETUP once its image was made; now nothing does.
            List<Integer> answered = new ArrayList<>(answers(spoofer, 1_000));
            byte[] data = dataFrame(streamId, 1024);
            spoofer.send(new DatagramPacket(data, data.length, target, PORT));
            answered.addAll(answers(spoofer, 1_000));
            Set<Integer> images = imageSessions(driver, streamId);
            TransportReport report = rx.endStep();

            Map<String, Long> flow = report.flow(0);
            assertThat(flow.get(AeronProbeCounter.RCV_NAKS_SENT.key)).as("NAKs of the spoofed image").isZero();
            assertThat(flow.get(AeronProbeCounter.LOSS_REPORT_BYTES.key)).as("its loss report").isZero();
            assertThat(flow.get(AeronProbeCounter.LOSS_REPORT_OBSERVATIONS.key)).isZero();
            assertThat(images).as("images on the flow's stream").isEqualTo(real);
            assertThat(answered).as("frames the driver sent the spoofer (3: status message, 2: NAK)").isEmpty();
            assertThat(flow.get(TransportReport.FOREIGN)).as("the SETUP and the data frame").isEqualTo(2L);
            assertThat(flow.get("aeron.foreignImages")).isEqualTo(1L);
            assertThat(report.counters().get("aeron.foreignImages")).isEqualTo(1L);
            assertThat(report.notes()).anySatisfy(n -> assertThat(n).contains("port " + PORT)
                .contains("2 Aeron frame(s) of another session").contains("1 of them setting up an image"));
        }
    }
}
