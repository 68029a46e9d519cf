package io.lossprobe.udp;

import io.lossprobe.core.transport.TransportOption;
import java.util.List;

/** The UDP transport's options, declared once; the sender and receiver read them through these declarations. */
final class UdpOptions {
    static final TransportOption<String> IO = TransportOption.choice("udp.io", "auto",
        "socket I/O: native epoll (sendmmsg/recvmmsg, GSO) or Java NIO; auto takes epoll where it loads",
        "auto", "epoll", "nio");
    static final TransportOption<Integer> RCVBUF = TransportOption.bytes("rcvbuf", UdpTransport.DEFAULT_BUFFER_BYTES,
        "4MiB", 1, Integer.MAX_VALUE, "receive socket buffer to request (the kernel caps it at net.core.rmem_max)");
    static final TransportOption<Integer> SNDBUF = TransportOption.bytes("sndbuf", UdpTransport.DEFAULT_BUFFER_BYTES,
        "4MiB", 1, Integer.MAX_VALUE, "send socket buffer to request (the kernel caps it at net.core.wmem_max)");
    static final TransportOption<String> GSO = TransportOption.choice("udp.gso", "auto",
        "batch messages into UDP_SEGMENT sends; auto uses it with epoll, on fails where it is unavailable",
        "auto", "on", "off").withSystemProperty();
    static final TransportOption<String> GRO = TransportOption.choice("udp.gro", "auto",
        "UDP_GRO on the receiving sockets (epoll only): faster, but socketDrops then counts coalesced packets (the "
            + "socket's share of loss an estimate); auto turns it on, for the rest of the run, from the first step "
            + "whose per-flow rate reaches half a message per send cycle (10k/s a flow by default) or max",
        "auto", "off", "on", "false", "true").withSystemProperty();
    static final TransportOption<String> RX_THREADS = TransportOption.autoOrNumber("udp.rxThreads", 1, 256,
        "receiving event loops; auto is half the cores, at least 2, never more than the flows").withSystemProperty();
    static final TransportOption<String> RECVERR = TransportOption.choice("udp.recverr", "auto",
        "IP_RECVERR on the sending sockets, so a datagram the sending host's own egress queue drops is a failed "
            + "send; auto uses it with epoll", "auto", "on", "off").withSystemProperty();
    static final TransportOption<Long> MIN_CYCLE_NS = TransportOption.number("udp.minCycleNs",
        UdpSender.DEFAULT_MIN_CYCLE_NS, 0, 1_000_000_000L,
        "shortest gap in ns between send cycles that are not behind").withSystemProperty();

    static final TransportOption<Long> READ_INTERVAL_NS = TransportOption.number("udp.readIntervalNs",
        StampedReader.DEFAULT_READ_INTERVAL_NS, 0, 100_000_000L,
        "default timing, stream mode, kernel stamps: the receiving threads read their sockets every this many ns "
            + "(sooner when the buffers fill) instead of waking for every datagram; arrival times are the kernel's, so "
            + "the wait is in no figure; 0 wakes for every datagram").withSystemProperty();

    static final TransportOption<Long> ECHO_WAKE_EARLY_NS = TransportOption.number("udp.echoWakeEarlyNs",
        io.lossprobe.core.transport.SendPacing.EARLY_WAKE_NS, 0, 1_000_000L,
        "echo mode, default timing, kernel stamps: the responder wakes this many ns before its next request is due "
            + "(the gap between the last two, repeated) and looks for it until as long after, instead of being woken "
            + "by it; 0 waits in epoll_wait for every request").withSystemProperty();

    static final TransportOption<String> SEND = TransportOption.choice("udp.send", "auto",
        "send path: native (lossprobe's native piece: one sendmmsg per send cycle over every flow, a GSO send per "
            + "flow's run) or netty (a GSO send per flow through Netty); auto takes native in stream mode with the "
            + "default timing wherever the native piece loads and udp.io is not nio", "auto", "native", "netty")
        .withSystemProperty();
    static final TransportOption<String> TIMESTAMPS = TransportOption.choice("udp.timestamps", "auto",
        "receive times: kernel (SO_TIMESTAMPNS, read by lossprobe's native piece; needs epoll), "
            + "user (the receiving thread's clock after each read, Netty's reads); auto takes the kernel's wherever "
            + "it works", "auto", "kernel", "user").withSystemProperty();
    static final TransportOption<String> PIN = TransportOption.choice("udp.pin", "off",
        "precision timing: pin the sending thread and each receiving thread to a CPU of its own (the highest "
            + "first; needs the native piece)", "off", "on").withSystemProperty();
    static final TransportOption<Long> SLICE_NS = TransportOption.number("udp.sliceNs", 100_000, 0, 100_000_000L,
        "precision timing: the scheduler slice in ns the sending and receiving threads ask for (Linux 6.12+, "
            + "0.1-100 ms; 0 leaves the kernel's): a woken thread with a short slice preempts a busy one at once")
        .withSystemProperty();

    static final List<TransportOption<?>> ALL = List.of(IO, RCVBUF, SNDBUF, GSO, GRO, RX_THREADS, RECVERR,
        MIN_CYCLE_NS, READ_INTERVAL_NS, ECHO_WAKE_EARLY_NS, SEND, io.lossprobe.core.transport.Timing.OPTION,
        TIMESTAMPS, PIN, SLICE_NS,
        UdpMulticast.GROUP, UdpMulticast.SOURCE, UdpMulticast.TTL, UdpMulticast.INTERFACE);

    private UdpOptions() {
    }
}
