package io.lossprobe.tcp;

import static io.lossprobe.core.transport.CounterDescriptor.Category.BACK_PRESSURE;
import static io.lossprobe.core.transport.CounterDescriptor.Category.CONNECTION;
import static io.lossprobe.core.transport.CounterDescriptor.Category.ERROR;
import static io.lossprobe.core.transport.CounterDescriptor.Category.PATH;
import static io.lossprobe.core.transport.CounterDescriptor.Category.RETRANSMIT;
import static io.lossprobe.core.transport.CounterDescriptor.counter;
import static io.lossprobe.core.transport.CounterDescriptor.gauge;

import io.lossprobe.core.transport.CounterDescriptor;
import io.lossprobe.core.transport.EchoReplies;
import java.util.ArrayList;
import java.util.List;

/**
 * The TCP transport's counters, declared once (see {@link CounterDescriptor}). The sender's come from TCP_INFO of
 * the sending socket (the side that retransmits) at the step's end; {@code tcp.rx.*} are the receiving side's.
 */
final class TcpCounters {
    /** With echo mode's {@link EchoReplies#COUNTERS}. */
    static final List<CounterDescriptor> ALL = EchoReplies.withCounters(all());

    private TcpCounters() {
    }

    private static List<CounterDescriptor> all() {
        List<CounterDescriptor> all = new ArrayList<>(List.of(
            counter(FlowWriter.TOTAL_RETRANS, RETRANSMIT, "segments",
                "segments the sending connection retransmitted (tcpi_total_retrans)"),
            gauge(FlowWriter.LOST_SEGMENTS, PATH, "segments",
                "segments TCP believed lost and not yet repaired at the step's end (tcpi_lost)"),
            gauge(FlowWriter.RTT_US, PATH, "us", "smoothed round-trip time at the step's end (tcpi_rtt)"),
            gauge(FlowWriter.RTT_VAR_US, PATH, "us", "round-trip time variation at the step's end (tcpi_rttvar)"),
            gauge(FlowWriter.REORDERING, PATH, "segments",
                "TCP's estimate of how far segments get reordered at the step's end (tcpi_reordering)"),
            gauge(FlowWriter.SND_CWND_SEGMENTS, PATH, "segments", "congestion window at the step's end"),
            counter(FlowWriter.CONNECTION_FAILURES, CONNECTION, "connections",
                "the flow's connection ended during the step, or a reconnect failed"),
            counter(FlowWriter.RECONNECTS, CONNECTION, "connections",
                "the flow was reconnected at the step's start after a failure"),
            counter(FlowWriter.WRITE_BLOCKED_EPISODES, BACK_PRESSURE, "episodes",
                "times the flow hit the write buffer's high water mark and had to wait"),
            gauge(FlowWriter.MAX_QUEUED_BYTES, BACK_PRESSURE, "bytes",
                "most bytes queued in lossprobe for the connection during the step"),
            counter(TcpReceiver.CONNECTIONS_ACCEPTED, CONNECTION, "connections", "connections the receiver accepted"),
            counter(TcpReceiver.CONNECTIONS_CLOSED, CONNECTION, "connections", "accepted connections that ended"),
            counter(TcpReceiver.CONNECTION_ERRORS, ERROR, "errors", "I/O errors on accepted connections"),
            counter(TcpReceiver.GARBAGE_CLOSES, CONNECTION, "connections",
                "connections closed because the stream held something that is not a lossprobe message"),
            counter(TcpReceiver.TRUNCATED_BYTES, CONNECTION, "bytes",
                "bytes of an incomplete message left when a connection ended"),
            counter(TcpReceiver.CONNECTIONS_REFUSED, CONNECTION, "connections",
                "connections refused because the flow already had its one connection, or from another address"),
            counter(TcpReceiver.IDLE_CLOSES, CONNECTION, "connections",
                "connections closed because they sent nothing for too long"),
            counter(TcpReceiver.ACCEPT_ERRORS, ERROR, "errors",
                "accepts that failed (EMFILE, say); the listener pauses and accepts again")));
        for (FailureCause cause : FailureCause.values()) {
            all.add(counter(cause.key, CONNECTION, "connections",
                "connections that ended this way: " + cause.key.substring(FailureCause.KEY_PREFIX.length())));
        }
        return List.copyOf(all);
    }
}
