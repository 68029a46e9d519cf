package io.lossprobe.udp;

import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.DeclaredTransport;

/**
 * Raw UDP: one datagram per message, one socket per port on each side, no retransmission. What is lost is lost.
 *
 * <p>Options (declared in {@link UdpOptions}): {@code udp.io} (auto, epoll, nio), {@code rcvbuf} and {@code sndbuf}
 * (bytes requested; the kernel caps them at net.core.rmem_max / wmem_max and the granted sizes are reported). For
 * throughput work (see docs/performance.md), each of these also takes its default from the system property
 * {@code lossprobe.<option>}:
 * {@code udp.gso} (auto, on, off: batch messages into UDP_SEGMENT sends; auto uses it with epoll),
 * {@code udp.gro} (off, on: UDP_GRO on the receiving sockets; faster, but socketDrops then counts coalesced
 * packets rather than datagrams), {@code udp.rxThreads} (receiving event loops; auto is half the cores, at
 * least 2, never more than the flows), {@code udp.recverr} (auto, on, off: IP_RECVERR on the sending sockets, so
 * a datagram the sending host's own egress queue drops fails its send and counts in sendFailed, not as lost; auto
 * uses it with epoll). {@code udp.minCycleNs} (default 50,000) is the shortest gap between send cycles that are
 * not behind.
 */
public final class UdpTransport extends DeclaredTransport {
    static final int DEFAULT_BUFFER_BYTES = 4 * 1024 * 1024;

    public UdpTransport() {
        super("udp", false, UdpOptions.ALL, UdpCounter.ALL);
    }

    @Override
    public ReceiverEndpoint openReceiver(ReceiverSpec spec) throws Exception {
        return UdpReceiver.open(spec);
    }

    @Override
    public SenderEndpoint openSender(SenderSpec spec) throws Exception {
        return UdpSender.open(spec);
    }
}
