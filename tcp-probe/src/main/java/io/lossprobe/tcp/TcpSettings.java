package io.lossprobe.tcp;

import io.lossprobe.core.transport.TransportOption;
import io.lossprobe.netty.NettyIo;
import java.util.List;
import java.util.Map;

/**
 * The TCP transport's options, parsed once with messages fit for the command line.
 *
 * @param io                     epoll (with TCP_INFO) or nio
 * @param noDelay                TCP_NODELAY on the senders: a batch leaves at once instead of waiting for Nagle
 * @param receiveBufferBytes     SO_RCVBUF to request, or 0 to leave the kernel's autotuning on
 * @param sendBufferBytes        SO_SNDBUF to request, or 0 to leave the kernel's autotuning on
 * @param highWaterMarkBytes     bytes queued in Netty per connection above which the flow's writer reports BLOCKED
 */
record TcpSettings(NettyIo io, boolean noDelay, int receiveBufferBytes, int sendBufferBytes, int highWaterMarkBytes) {
    static final int DEFAULT_HIGH_WATER_MARK_BYTES = 256 * 1024;

    /**
     * The options, declared once (keys included: {@code IO_OPTION.key()}); {@link #from} reads through them.
     * {@code rcvbuf} and {@code sndbuf} are shared with the other transports, and only applied when given, since a
     * set SO_RCVBUF turns autotuning off.
     */
    static final TransportOption<String> IO_OPTION = TransportOption.choice("tcp.io", "auto",
        "socket I/O: native epoll (with TCP_INFO counters) or Java NIO; auto takes epoll where it loads",
        "auto", "epoll", "nio");
    static final TransportOption<Boolean> NODELAY_OPTION = TransportOption.bool("tcp.nodelay", true,
        "TCP_NODELAY on the senders: a batch leaves at once instead of waiting for Nagle");
    static final TransportOption<Integer> HIGH_WATER_MARK_OPTION = TransportOption.bytes("tcp.writeBufferHighWaterMark",
        DEFAULT_HIGH_WATER_MARK_BYTES, "256KiB", 2, Integer.MAX_VALUE,
        "bytes queued per connection above which the flow reports BLOCKED (writable again below half)");
    static final TransportOption<Integer> RCVBUF_OPTION = TransportOption.bytes("rcvbuf", null,
        "kernel autotuning", 1, Integer.MAX_VALUE, "receive socket buffer; setting it turns autotuning off");
    static final TransportOption<Integer> SNDBUF_OPTION = TransportOption.bytes("sndbuf", null,
        "kernel autotuning", 1, Integer.MAX_VALUE, "send socket buffer; setting it turns autotuning off");
    static final List<TransportOption<?>> ALL = List.of(IO_OPTION, NODELAY_OPTION, HIGH_WATER_MARK_OPTION,
        RCVBUF_OPTION, SNDBUF_OPTION);

    static TcpSettings from(Map<String, String> options) {
        Integer rcvbuf = RCVBUF_OPTION.read(options);
        Integer sndbuf = SNDBUF_OPTION.read(options);
        return new TcpSettings(NettyIo.choose(IO_OPTION.key(), IO_OPTION.read(options)), NODELAY_OPTION.read(options),
            rcvbuf == null ? 0 : rcvbuf, sndbuf == null ? 0 : sndbuf, HIGH_WATER_MARK_OPTION.read(options));
    }

    /** Netty turns writability back on below this: half the high mark, so a flow does not flap. */
    int lowWaterMarkBytes() {
        return highWaterMarkBytes / 2;
    }
}
