package io.lossprobe.tcp;

import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.DeclaredTransport;

/**
 * TCP: one connection per port pair (flow i: the receiver listens on {@code basePort + i}, the sender connects to
 * it), messages framed by the length in their header. TCP promises delivery on a live connection, so any loss,
 * duplicate or reorder it shows is a defect; what it costs to keep that promise shows in its counters
 * (retransmits, rtt, cwnd from TCP_INFO) and in delay and {@code behind}. See docs/tcp.md.
 *
 * <p>Options: {@code tcp.io} (auto, epoll, nio), {@code tcp.nodelay} (true by default),
 * {@code tcp.writeBufferHighWaterMark} (bytes queued per connection before the flow reports BLOCKED, default
 * 256 KiB), {@code rcvbuf} and {@code sndbuf} (only applied when given: a fixed buffer turns autotuning off).
 */
public final class TcpTransport extends DeclaredTransport {
    public TcpTransport() {
        super("tcp", true, TcpSettings.ALL, TcpCounter.ALL);
    }

    @Override
    public ReceiverEndpoint openReceiver(ReceiverSpec spec) throws Exception {
        return TcpReceiver.open(spec, TcpSettings.from(spec.options()));
    }

    /** A sender that cannot connect a flow fails after that flow's connect wait ({@link TcpSender#open}). */
    @Override
    public long senderOpenTimeoutMs(io.lossprobe.core.plan.Plan plan, java.util.Map<String, String> options) {
        return TcpSender.CONNECT_WAIT_MS;
    }

    @Override
    public SenderEndpoint openSender(SenderSpec spec) throws Exception {
        return TcpSender.open(spec, TcpSettings.from(spec.options()));
    }
}
