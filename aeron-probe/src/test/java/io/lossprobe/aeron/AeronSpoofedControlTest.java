package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.aeron.AeronCounters;
import io.aeron.ExclusivePublication;
import io.aeron.driver.media.ReceiveChannelEndpoint;
import io.aeron.driver.status.StreamCounter;
import io.aeron.protocol.HeaderFlyweight;
import io.aeron.protocol.NakFlyweight;
import io.aeron.protocol.StatusMessageFlyweight;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.MessageWriter;
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
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Spoofed status messages and NAKs to a publication's control socket. From the controller's address but another
 * port, the kernel drops them: Aeron connects a unicast publication's socket to the subscriber's endpoint, so the
 * driver neither counts them nor answers (and could answer nobody but that endpoint anyway). Forged with the
 * receiver's address and port too (sent here from the receiver's own socket, the bytes such a spoofer puts on the
 * wire), the NAKs are taken and retransmitted, to the receiver's endpoint only, not to the spoofer; and the step
 * says that those NAKs were not the receiver's instead of passing their retransmissions off as repairs.
 */
@Tag("system")
class AeronSpoofedControlTest {
    private static final int PORT = 43912;
    private static final int FORGED_NAKS = 5;

    private static ByteBuffer nak(int sessionId, int streamId, int termId, int length) {
        UnsafeBuffer b = new UnsafeBuffer(new byte[NakFlyweight.HEADER_LENGTH]);
        NakFlyweight nak = new NakFlyweight(b);
        nak.version(HeaderFlyweight.CURRENT_VERSION).flags((short) 0).headerType(HeaderFlyweight.HDR_TYPE_NAK)
            .frameLength(NakFlyweight.HEADER_LENGTH);
        nak.sessionId(sessionId).streamId(streamId).termId(termId).termOffset(0).length(length);
        return ByteBuffer.wrap(b.byteArray());
    }

    /** A status message asking for a SETUP, with a window of a whole term. */
    static ByteBuffer setupRequest(int sessionId, int streamId, int termId) {
        UnsafeBuffer b = new UnsafeBuffer(new byte[StatusMessageFlyweight.HEADER_LENGTH]);
        StatusMessageFlyweight sm = new StatusMessageFlyweight(b);
        sm.version(HeaderFlyweight.CURRENT_VERSION).flags(StatusMessageFlyweight.SEND_SETUP_FLAG)
            .headerType(HeaderFlyweight.HDR_TYPE_SM).frameLength(StatusMessageFlyweight.HEADER_LENGTH);
        sm.sessionId(sessionId).streamId(streamId).consumptionTermId(termId).consumptionTermOffset(0)
            .receiverWindowLength(1 << 16).receiverId(42);
        return ByteBuffer.wrap(b.byteArray());
    }

    /** The publication's stream counter of {@code type}, or -1 when the driver has none. */
    private static long streamCounter(AeronDriver driver, int type, int sessionId, int streamId) {
        long[] value = {-1};
        driver.aeron().countersReader().forEach((id, t, key, label) -> {
            if (t == type && key.getInt(StreamCounter.SESSION_ID_OFFSET) == sessionId
                && key.getInt(StreamCounter.STREAM_ID_OFFSET) == streamId) {
                value[0] = driver.aeron().countersReader().getCounterValue(id);
            }
        });
        return value[0];
    }

    /** The port of the driver's one send endpoint, from its local-address counter ("snd-local-sockaddr: ..."). */
    private static int senderControlPort(AeronDriver driver) {
        int[] port = {-1};
        driver.aeron().countersReader().forEach((id, type, key, label) -> {
            if (type == AeronCounters.DRIVER_LOCAL_SOCKET_ADDRESS_STATUS_TYPE_ID && label.startsWith("snd")) {
                port[0] = Integer.parseInt(label.substring(label.lastIndexOf(':') + 1).trim());
            }
        });
        assertThat(port[0]).as("the publication's control port").isPositive();
        return port[0];
    }

    private static void await(String what, LongSupplier value, long atLeast) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (value.getAsLong() < atLeast) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** True when any datagram reaches {@code socket} within {@code timeoutMs}. */
    private static boolean receivesAnything(DatagramSocket socket, int timeoutMs) throws Exception {
        socket.setSoTimeout(timeoutMs);
        try {
            socket.receive(new DatagramPacket(new byte[2048], 2048));
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        }
    }

    @Test
    @Timeout(60)
    void spoofedStatusMessagesAndNaksMakeTheDriverSendOnlyToTheReceiverAndShowAsNotTheReceivers() throws Exception {
        Plan plan = new Plan(List.of("aeron"), 1, PORT, List.of(Level.parse("1k")), 1_000_000_000L, 0,
            1_000_000_000L, 64, "127.0.0.1");
        MessageAuth key = MessageAuth.random();
        FlowReceiver[] flows = {new FlowReceiver(0, 1, 64, 1, false, key)};
        Map<String, String> options = Map.of(AeronOptions.TERM_LENGTH_OPTION.key(), "64k");
        AtomicReference<ReceiveChannelEndpoint> receiveEndpoint = new AtomicReference<>();
        AeronTransport transport = new AeronTransport(ctx -> {
            var counting = ctx.receiveChannelEndpointSupplier();
            ctx.receiveChannelEndpointSupplier((channel, dispatcher, status, context) -> {
                ReceiveChannelEndpoint e = counting.newInstance(channel, dispatcher, status, context);
                receiveEndpoint.set(e);
                return e;
            });
        });
        int streamId = AeronOptions.streamId(0);
        try (ReceiverEndpoint rx = transport.openReceiver(new ReceiverSpec(plan, "127.0.0.1", flows, options, null,
                 "127.0.0.1"));
             SenderEndpoint tx = transport.openSender(new SenderSpec(plan, "127.0.0.1", 1, options, key));
             DatagramSocket spoofer = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0))) {
            AeronDriver driver = ((AeronReceiver) rx).driver();
            java.lang.reflect.Field field = AeronSender.class.getDeclaredField("publications");
            field.setAccessible(true);
            ExclusivePublication publication = ((ExclusivePublication[]) field.get(tx))[0];
            int session = publication.sessionId();
            InetSocketAddress control = new InetSocketAddress(InetAddress.getByName("127.0.0.1"),
                senderControlPort(driver));
            rx.beginStep(0);
            tx.beginStep(0);
            MessageWriter writer = tx.writer(0);
            for (int i = 0; i < 4; i++) {
                writer.write(0, io.lossprobe.core.wire.MessageHeader.word1(0, 0, 64), i, 0, 0, 0);
            }
            writer.flush();
            int sent = 4 * 96; // four 64-byte messages, each a 96-byte frame
            await("the four frames sent", () -> streamCounter(driver, AeronCounters.DRIVER_SENDER_POSITION_TYPE_ID,
                session, streamId), sent);

            // From the controller's address, another port: the connected socket never takes them.
            ByteBuffer spoofedNak = nak(session, streamId, publication.initialTermId(), sent);
            ByteBuffer spoofedSm = setupRequest(session, streamId, publication.initialTermId());
            spoofer.send(new DatagramPacket(spoofedNak.array(), spoofedNak.capacity(), control));
            spoofer.send(new DatagramPacket(spoofedSm.array(), spoofedSm.capacity(), control));
            assertThat(receivesAnything(spoofer, 1_000)).as("a retransmit or SETUP to the spoofer").isFalse();
            assertThat(streamCounter(driver, AeronCounters.DRIVER_SENDER_NAKS_RECEIVED_TYPE_ID, session, streamId))
                .as("NAKs the publication took from the spoofer's port").isZero();

            // Forged with the receiver's address and port: taken, and answered at the receiver's endpoint only.
            for (int i = 0; i < FORGED_NAKS; i++) {
                receiveEndpoint.get().sendTo(nak(session, streamId, publication.initialTermId(), sent), control);
            }
            await("the forged NAKs taken", () -> streamCounter(driver,
                AeronCounters.DRIVER_SENDER_NAKS_RECEIVED_TYPE_ID, session, streamId), FORGED_NAKS);
            assertThat(receivesAnything(spoofer, 200)).as("a retransmit to the spoofer").isFalse();
            TransportReport sender = tx.endStep();
            TransportReport receiver = rx.endStep();

            assertThat(sender.counters().get("aeron.retransmitsSent")).as("retransmits the forged NAKs made")
                .isPositive();
            // Sent through the socket connected to the receiver's endpoint: the only place a datagram can go.
            assertThat(sender.counters().get("aeron.retransmittedBytes")).isPositive();
            assertThat(receiver.flow(0).get(AeronProbeCounter.RCV_NAKS_SENT.key)).isZero();
            assertThat(sender.flow(0).get(AeronProbeCounter.SND_NAKS_RECEIVED.key)).isEqualTo(FORGED_NAKS);
            assertThat(transport.stepWarnings(sender, receiver)).singleElement().asString()
                .contains("the sending driver received " + FORGED_NAKS + " NAK(s), the receiving driver sent 0")
                .contains("not the receiver's");
            assertThat(transport.stepWarnings(receiver, receiver)).as("no warning where the counts agree").isEmpty();
        }
    }
}
