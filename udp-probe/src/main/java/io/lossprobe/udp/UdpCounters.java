package io.lossprobe.udp;

import static io.lossprobe.core.transport.CounterDescriptor.Category.DROP;
import static io.lossprobe.core.transport.CounterDescriptor.Category.ERROR;
import static io.lossprobe.core.transport.CounterDescriptor.Category.TRAFFIC;
import static io.lossprobe.core.transport.CounterDescriptor.counter;
import static io.lossprobe.core.transport.CounterDescriptor.gauge;

import io.lossprobe.core.transport.CounterDescriptor;
import io.lossprobe.core.transport.EchoReplies;
import java.util.List;

/**
 * The UDP transport's counters, declared once (see {@link CounterDescriptor}); echo mode's are {@link EchoReplies}'.
 */
final class UdpCounters {
    static final String RECEIVER_SOCKET_DROPS = "udp.receiverSocketDrops";
    static final String SENDER_ERROR_QUEUE_PURGES = "udp.senderErrorQueuePurges";
    static final String SENDER_SOCKET_ERRORS = "udp.senderSocketErrors";
    static final String RECEIVE_GRO = "udp.receiveGro";

    static final List<CounterDescriptor> ALL = EchoReplies.withCounters(List.of(
        counter(RECEIVER_SOCKET_DROPS, DROP, "datagrams",
            "datagrams the receiving host's kernel dropped at the flows' sockets (/proc/net/udp drops)"),
        counter(SENDER_ERROR_QUEUE_PURGES, ERROR, "purges",
            "times a sending socket's error queue (ICMP errors queued by IP_RECVERR) was emptied"),
        counter(SENDER_SOCKET_ERRORS, ERROR, "errors", "errors the sending sockets reported"),
        gauge(RECEIVE_GRO, TRAFFIC, "flag", "1 when the receiving sockets had UDP_GRO on in this step (udp.gro): "
            + "their drops then count coalesced packets, so the socket's share of the loss is an estimate")));

    private UdpCounters() {
    }
}
