package io.lossprobe.tcp;

import java.util.Locale;
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
record TcpSettings(TcpIo io, boolean noDelay, int receiveBufferBytes, int sendBufferBytes, int highWaterMarkBytes) {
    static final String IO = "tcp.io";
    static final String NODELAY = "tcp.nodelay";
    static final String HIGH_WATER_MARK = "tcp.writeBufferHighWaterMark";
    /** Shared with the other transports; only applied when given, since a set SO_RCVBUF turns autotuning off. */
    static final String RCVBUF = "rcvbuf";
    static final String SNDBUF = "sndbuf";

    static final int DEFAULT_HIGH_WATER_MARK_BYTES = 256 * 1024;

    static TcpSettings from(Map<String, String> options) {
        return new TcpSettings(TcpIo.choose(options.get(IO)), bool(options.get(NODELAY), true),
            bytes(options.get(RCVBUF), RCVBUF, 0), bytes(options.get(SNDBUF), SNDBUF, 0),
            bytes(options.get(HIGH_WATER_MARK), HIGH_WATER_MARK, DEFAULT_HIGH_WATER_MARK_BYTES));
    }

    /** Netty turns writability back on below this: half the high mark, so a flow does not flap. */
    int lowWaterMarkBytes() {
        return highWaterMarkBytes / 2;
    }

    private static boolean bool(String value, boolean fallback) {
        if (value == null) {
            return fallback;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(NODELAY + " must be true or false, not '" + value + "'");
        };
    }

    private static int bytes(String value, String key, int fallback) {
        if (value == null) {
            return fallback;
        }
        long parsed;
        try {
            parsed = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a number of bytes, not '" + value + "'");
        }
        if (parsed < 1 || parsed > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(key + " must be between 1 and " + Integer.MAX_VALUE + " bytes");
        }
        return (int) parsed;
    }
}
