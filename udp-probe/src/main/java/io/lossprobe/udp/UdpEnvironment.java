package io.lossprobe.udp;

import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.netty.NettyIo;

/**
 * The keys the UDP transport reports its set-up under in a run's {@code environment}, each declared once; the
 * sender and the receiver put their values by {@link #key}. Keys ending in {@code BufferRequested} or
 * {@code BufferGranted} are filed under the socket buffers. Declared elsewhere because they are shared: the socket
 * I/O ({@link NettyIo#environmentKey}), {@link SenderEndpoint#EGRESS_DROPS_REPORTED} and
 * {@link SenderEndpoint#MESSAGES_PER_PACKET_MAX}.
 */
enum UdpEnvironment {
    SEND_BUFFER_REQUESTED("sendBufferRequested"),
    SEND_BUFFER_GRANTED("sendBufferGranted"),
    GSO_SEGMENTS_PER_SEND("gsoSegmentsPerSend"),
    NATIVE_SEND("nativeSend"),
    SEND_TIMER_SLACK_NS("sendTimerSlackNs"),
    SEND_PINNED_THREADS("sendPinnedThreads"),
    SEND_SLICE_NS("sendSliceNs"),
    REPLY_KERNEL_TIMESTAMPS("replyKernelTimestamps"),
    RECEIVE_BUFFER_REQUESTED("receiveBufferRequested"),
    RECEIVE_BUFFER_GRANTED("receiveBufferGranted"),
    RECEIVE_THREADS("receiveThreads"),
    /** The receiving threads' read interval in ns (udp.readIntervalNs; 0: they wake for every datagram). */
    READ_INTERVAL_NS("readIntervalNs"),
    /** An echo responder's early wake-up in ns (udp.echoWakeEarlyNs, {@link ArrivalForecast}); absent when none. */
    ECHO_WAKE_EARLY_NS("echoWakeEarlyNs"),
    GRO("gro"),
    GRO_AUTO("groAuto"),
    RECEIVE_TIMER_SLACK_NS("receiveTimerSlackNs"),
    RECEIVE_PINNED_THREADS("receivePinnedThreads"),
    RECEIVE_SLICE_NS("receiveSliceNs"),
    RECEIVE_BUSY_POLL_US("receiveBusyPollUs"),
    KERNEL_TIMESTAMPS("kernelTimestamps"),
    /** With --dscp: 1 when the receivers read each arrival's class (lossprobe's own reads), 0 when not (Netty's). */
    DSCP_CHECKED("dscpChecked"),
    /** 1 in the precision timing mode (the sender's and the receiver's). */
    TIMING_PRECISION("timingPrecision");

    /** The key its value is put under in the transport's environment. */
    final String key;

    UdpEnvironment(String key) {
        this.key = key;
    }
}
