package io.lossprobe.udp;

import io.lossprobe.netty.NettyIo;
import io.netty.channel.epoll.EpollDatagramChannel;

/**
 * How many messages one GSO send of the UDP sender carries ({@code udp.gso}), and so what a receiver with UDP_GRO
 * knows one dropped packet held at most.
 */
final class GsoSends {
    /** Linux's UDP_MAX_SEGMENTS before 6.9 (128 after); the smaller value works on every GSO kernel. */
    static final int MAX_GSO_SEGMENTS = 64;
    /** One GSO send is one UDP datagram before segmentation: at most 65,507 bytes of payload over IPv4. */
    private static final int MAX_GSO_BYTES = 65_507;
    /** The largest segment a 1500-byte MTU carries in one IPv4 packet (1500 - 20 - 8). */
    static final int MAX_GSO_SEGMENT_BYTES = 1472;

    private GsoSends() {
    }

    /**
     * Messages per GSO send: up to 64 (UDP_MAX_SEGMENTS on Linux before 6.9), within one 64 KiB datagram, and only
     * for messages that fit an Ethernet MTU (the kernel refuses a segment size larger than the route's MTU); 1 means
     * no GSO. {@code udp.gso}: auto (default), on, off.
     */
    static int messagesPerGsoSend(NettyIo io, int messageSize, String option) {
        String o = option.toLowerCase(java.util.Locale.ROOT);
        if (!o.equals("auto") && !o.equals("on") && !o.equals("off")) {
            throw new IllegalArgumentException("udp.gso must be auto, on or off, not '" + option + "'");
        }
        boolean supported = io == NettyIo.EPOLL && EpollDatagramChannel.isSegmentedDatagramPacketSupported();
        if (o.equals("off") || !supported || messageSize > MAX_GSO_SEGMENT_BYTES) {
            if (o.equals("on")) {
                throw new IllegalStateException("UDP GSO is not available here (needs native epoll with "
                    + "UDP_SEGMENT, and messages of at most " + MAX_GSO_SEGMENT_BYTES + " bytes)");
            }
            return 1;
        }
        return mostMessagesPerGsoSend(messageSize);
    }

    /**
     * The most messages of {@code messageSize} bytes one GSO send of lossprobe's carries: {@value #MAX_GSO_SEGMENTS},
     * fewer where they would pass a datagram's 65,507 bytes. Also what a receiver with UDP_GRO knows one dropped packet
     * held at most.
     */
    static int mostMessagesPerGsoSend(int messageSize) {
        return Math.max(1, Math.min(MAX_GSO_SEGMENTS, MAX_GSO_BYTES / messageSize));
    }
}
