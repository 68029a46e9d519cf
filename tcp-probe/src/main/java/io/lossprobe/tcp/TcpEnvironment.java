package io.lossprobe.tcp;

import io.lossprobe.netty.NettyIo;

/**
 * The keys the TCP transport reports its set-up under in a run's {@code environment}, each declared once; the
 * sender and the receiver put their values by {@link #key}. Keys ending in {@code BufferRequested} or
 * {@code BufferGranted} are filed under the socket buffers. The socket I/O's key is {@link NettyIo#environmentKey}
 * (shared with UDP).
 */
enum TcpEnvironment {
    NO_DELAY("noDelay"),
    WRITE_BUFFER_HIGH_WATER_MARK("writeBufferHighWaterMark"),
    SEND_BUFFER_REQUESTED("sendBufferRequested"),
    SEND_BUFFER_GRANTED("sendBufferGranted"),
    RECEIVE_BUFFER_REQUESTED("receiveBufferRequested"),
    RECEIVE_BUFFER_GRANTED("receiveBufferGranted");

    /** The key its value is put under in the transport's environment. */
    final String key;

    TcpEnvironment(String key) {
        this.key = key;
    }
}
