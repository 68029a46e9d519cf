package io.lossprobe.tcp;

import static io.lossprobe.core.transport.CounterDescriptor.Category.BACK_PRESSURE;
import static io.lossprobe.core.transport.CounterDescriptor.Category.CONNECTION;
import static io.lossprobe.core.transport.CounterDescriptor.Category.ERROR;
import static io.lossprobe.core.transport.CounterDescriptor.Category.PATH;
import static io.lossprobe.core.transport.CounterDescriptor.Category.RETRANSMIT;
import static io.lossprobe.core.transport.CounterDescriptor.Kind.COUNTER;
import static io.lossprobe.core.transport.CounterDescriptor.Kind.GAUGE;

import io.lossprobe.core.transport.CounterDescriptor;
import io.lossprobe.core.transport.CounterDescriptor.Category;
import io.lossprobe.core.transport.CounterDescriptor.Kind;
import io.lossprobe.core.transport.EchoReplies;
import java.util.ArrayList;
import java.util.List;

/**
 * The TCP transport's counters, each declared once: its key and its meaning ({@link CounterDescriptor}) in one
 * constant, which the code that counts it puts by {@link #key}. The sender's come from TCP_INFO of the sending socket
 * (the side that retransmits) at the step's end; {@code tcp.rx.*} are the receiving side's.
 */
enum TcpCounter {
    TOTAL_RETRANS("tcp.totalRetrans", COUNTER, RETRANSMIT, "segments",
        "segments the sending connection retransmitted (tcpi_total_retrans)"),
    LOST_SEGMENTS("tcp.lostSegments", GAUGE, PATH, "segments",
        "segments TCP believed lost and not yet repaired at the step's end (tcpi_lost)"),
    RTT_US("tcp.rttUs", GAUGE, PATH, "us",
        "smoothed round-trip time at the step's end (tcpi_rtt)"),
    RTT_VAR_US("tcp.rttVarUs", GAUGE, PATH, "us",
        "round-trip time variation at the step's end (tcpi_rttvar)"),
    REORDERING("tcp.reordering", GAUGE, PATH, "segments",
        "TCP's estimate of how far segments get reordered at the step's end (tcpi_reordering)"),
    SND_CWND_SEGMENTS("tcp.sndCwndSegments", GAUGE, PATH, "segments",
        "congestion window at the step's end"),
    CONNECTION_FAILURES("tcp.connectionFailures", COUNTER, CONNECTION, "connections",
        "the flow's connection ended during the step, or a reconnect failed"),
    RECONNECTS("tcp.reconnects", COUNTER, CONNECTION, "connections",
        "the flow was reconnected at the step's start after a failure"),
    WRITE_BLOCKED_EPISODES("tcp.writeBlockedEpisodes", COUNTER, BACK_PRESSURE, "episodes",
        "times the flow hit the write buffer's high water mark and had to wait"),
    MAX_QUEUED_BYTES("tcp.maxQueuedBytes", GAUGE, BACK_PRESSURE, "bytes",
        "most bytes queued in lossprobe for the connection during the step"),
    CONNECTIONS_ACCEPTED("tcp.rx.connectionsAccepted", COUNTER, CONNECTION, "connections",
        "connections the receiver accepted"),
    CONNECTIONS_CLOSED("tcp.rx.connectionsClosed", COUNTER, CONNECTION, "connections",
        "accepted connections that ended"),
    CONNECTION_ERRORS("tcp.rx.connectionErrors", COUNTER, ERROR, "errors",
        "I/O errors on accepted connections"),
    GARBAGE_CLOSES("tcp.rx.garbageCloses", COUNTER, CONNECTION, "connections",
        "connections closed because the stream held something that is not a lossprobe message"),
    TRUNCATED_BYTES("tcp.rx.truncatedBytes", COUNTER, CONNECTION, "bytes",
        "bytes of an incomplete message left when a connection ended"),
    CONNECTIONS_REFUSED("tcp.rx.connectionsRefused", COUNTER, CONNECTION, "connections",
        "connections refused because the flow already had its one connection, or from another address"),
    IDLE_CLOSES("tcp.rx.idleCloses", COUNTER, CONNECTION, "connections",
        "connections closed because they sent nothing for too long"),
    ACCEPT_ERRORS("tcp.rx.acceptErrors", COUNTER, ERROR, "errors",
        "accepts that failed (EMFILE, say); the listener pauses and accepts again");

    /** Every TCP counter: these, one per {@link FailureCause}, and echo mode's {@link EchoReplies#COUNTERS}. */
    static final List<CounterDescriptor> ALL = EchoReplies.withCounters(all());

    /** The key its value is put under in a step's and a flow's counters. */
    final String key;
    private final CounterDescriptor descriptor;

    TcpCounter(String key, Kind kind, Category category, String unit, String description) {
        this.key = key;
        this.descriptor = new CounterDescriptor(key, kind, category, unit, description);
    }

    private static List<CounterDescriptor> all() {
        List<CounterDescriptor> all = new ArrayList<>();
        for (TcpCounter c : values()) {
            all.add(c.descriptor);
        }
        for (FailureCause cause : FailureCause.values()) {
            all.add(CounterDescriptor.counter(cause.key, CONNECTION, "connections",
                "connections that ended this way: " + cause.key.substring(FailureCause.KEY_PREFIX.length())));
        }
        return List.copyOf(all);
    }
}
