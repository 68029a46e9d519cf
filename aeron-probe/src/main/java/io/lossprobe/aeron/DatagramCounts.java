package io.lossprobe.aeron;

import io.aeron.driver.DataPacketDispatcher;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.media.ReceiveChannelEndpoint;
import io.aeron.driver.media.SendChannelEndpoint;
import io.aeron.driver.media.UdpChannel;
import io.aeron.protocol.DataHeaderFlyweight;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Counts the UDP datagrams the embedded driver sends and the data datagrams it receives, by wrapping its channel
 * endpoints. Aeron packs many messages (frames) into one datagram of up to an MTU, so datagrams/s and
 * messages/s differ; the driver's own counters give bytes only.
 *
 * <p>Sent datagrams are every {@code send} of a publication: data, heartbeats, retransmits and setup frames.
 * Received datagrams are those carrying data or heartbeat frames, counted before any test loss generator.
 * Each counter has one writer (the driver's sender or receiver agent), so a lazy set is enough.
 */
final class DatagramCounts {
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong received = new AtomicLong();
    private volatile boolean countingSends;
    private volatile boolean countingReceives;

    long sent() {
        return sent.get();
    }

    long received() {
        return received.get();
    }

    /** False when a test's driver customizer replaced the send endpoints, so there is no count to report. */
    boolean countingSends() {
        return countingSends;
    }

    boolean countingReceives() {
        return countingReceives;
    }

    SendChannelEndpoint newSendEndpoint(UdpChannel channel, AtomicCounter status, MediaDriver.Context ctx) {
        countingSends = true;
        return new CountingSendEndpoint(channel, status, ctx, sent);
    }

    ReceiveChannelEndpoint newReceiveEndpoint(UdpChannel channel, DataPacketDispatcher dispatcher,
                                              AtomicCounter status, MediaDriver.Context ctx) {
        countingReceives = true;
        return new CountingReceiveEndpoint(channel, dispatcher, status, ctx, received);
    }

    private static final class CountingSendEndpoint extends SendChannelEndpoint {
        private final AtomicLong sent;

        CountingSendEndpoint(UdpChannel channel, AtomicCounter status, MediaDriver.Context ctx, AtomicLong sent) {
            super(channel, status, ctx);
            this.sent = sent;
        }

        @Override
        public int send(ByteBuffer buffer) {
            int bytes = super.send(buffer);
            if (bytes > 0) {
                sent.lazySet(sent.get() + 1);
            }
            return bytes;
        }
    }

    private static final class CountingReceiveEndpoint extends ReceiveChannelEndpoint {
        private final AtomicLong received;

        CountingReceiveEndpoint(UdpChannel channel, DataPacketDispatcher dispatcher, AtomicCounter status,
                                MediaDriver.Context ctx, AtomicLong received) {
            super(channel, dispatcher, status, ctx);
            this.received = received;
        }

        @Override
        public int onDataPacket(DataHeaderFlyweight header, UnsafeBuffer buffer, int length,
                                InetSocketAddress srcAddress, int transportIndex) {
            received.lazySet(received.get() + 1);
            return super.onDataPacket(header, buffer, length, srcAddress, transportIndex);
        }
    }
}
