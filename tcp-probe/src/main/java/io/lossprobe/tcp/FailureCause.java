package io.lossprobe.tcp;

import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.unix.Errors;
import java.net.ConnectException;
import java.util.Locale;

/** Why a flow's connection ended, as a stable counter key ({@code tcp.failure.<key>}). */
enum FailureCause {
    /** The peer aborted the connection (RST; ECONNRESET). */
    RESET("reset"),
    /** Written after the peer had gone (EPIPE). */
    BROKEN_PIPE("brokenPipe"),
    /** The peer closed the connection in order (FIN) while the flow was still sending. */
    PEER_CLOSED("peerClosed"),
    /** Connect or retransmission timeout. */
    TIMEOUT("timeout"),
    /** Nobody listening (ECONNREFUSED) when (re)connecting. */
    REFUSED("refused"),
    OTHER("other");

    static final String KEY_PREFIX = "tcp.failure.";

    final String key;

    FailureCause(String name) {
        this.key = KEY_PREFIX + name;
    }

    /** {@code null} means the connection ended without an error: an orderly close by the peer. */
    static FailureCause of(Throwable cause) {
        if (cause == null) {
            return PEER_CLOSED;
        }
        if (cause instanceof Errors.NativeIoException n) {
            // Only reached when the native library is loaded (it made the exception), so Errors is safe here.
            int errno = n.expectedErr();
            if (errno == Errors.ERRNO_ECONNRESET_NEGATIVE) {
                return RESET;
            }
            if (errno == Errors.ERRNO_EPIPE_NEGATIVE) {
                return BROKEN_PIPE;
            }
            if (errno == Errors.ERROR_ECONNREFUSED_NEGATIVE) {
                return REFUSED;
            }
        }
        if (cause instanceof ConnectTimeoutException) {
            return TIMEOUT;
        }
        String message = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
        if (message.contains("reset")) {
            return RESET;
        }
        if (message.contains("broken pipe")) {
            return BROKEN_PIPE;
        }
        if (message.contains("timed out")) {
            return TIMEOUT;
        }
        if (cause instanceof ConnectException || message.contains("refused")) {
            return REFUSED;
        }
        return OTHER;
    }
}
