package io.lossprobe.tcp;

import io.netty.channel.Channel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.epoll.EpollTcpInfo;
import java.util.Map;

/**
 * One flow's TCP_INFO figures (epoll only): the last sample of the current connection (its total_retrans restarts
 * at 0 per connection), and the final total_retrans of every connection of this flow that ended, summed: together a
 * cumulative count, reported as the delta over the window. Sampled on the event loop, except
 * {@link #markWindowStart}.
 */
final class TcpInfoCounters {
    private final EpollTcpInfo tcpInfo = new EpollTcpInfo();
    private boolean haveTcpInfo;
    private long retrans;
    private volatile long retransOfEndedConnections;
    /** The cumulative count when the window began (sampled by the engine's thread), or -1 before any window. */
    private volatile long retransAtWindowStart = -1;
    /** The cumulative count at the last report. */
    private long retransReportedCumulative;
    private long lost;
    private long rttUs;
    private long rttVarUs;
    private long reordering;
    private long sndCwnd;

    /** Takes a sample of {@code channel}'s connection, when it is an open epoll socket. */
    void sample(Channel channel) {
        if (channel instanceof EpollSocketChannel epoll && epoll.isOpen()) {
            try {
                epoll.tcpInfo(tcpInfo);
            } catch (RuntimeException e) {
                return; // the socket closed under us; keep the last sample
            }
            haveTcpInfo = true;
            retrans = tcpInfo.totalRetrans();
            lost = tcpInfo.lost();
            rttUs = tcpInfo.rtt();
            rttVarUs = tcpInfo.rttvar();
            reordering = tcpInfo.reordering();
            sndCwnd = tcpInfo.sndCwnd();
        }
    }

    /** A new connection replaces {@code previous} (null for the first): the ended one's retransmissions are kept. */
    void connectionReplaced(Channel previous) {
        if (previous != null) {
            retransOfEndedConnections = retransOfEndedConnections + retrans;
            retrans = 0;
        }
    }

    /**
     * The window begins: remembers this flow's cumulative retransmissions, reading TCP_INFO on the calling (the
     * engine's) thread so the sending event loop is not stopped for it. getsockopt is safe beside the event loop's
     * own use of the socket; the connection does not change during a step (reconnects happen before it).
     */
    void markWindowStart(Channel ch, boolean down) {
        long current = 0;
        if (ch instanceof EpollSocketChannel epoll && epoll.isOpen() && !down) {
            try {
                current = epoll.tcpInfo(new EpollTcpInfo()).totalRetrans();
            } catch (RuntimeException e) {
                current = 0; // closed under us: its retransmissions are folded when the loop sees it end
            }
        }
        retransAtWindowStart = retransOfEndedConnections + current;
    }

    /** Whether the kernel holds nothing unacknowledged on {@code epoll} (a socket that fails to answer: true). */
    boolean allAcknowledged(EpollSocketChannel epoll) {
        try {
            return epoll.tcpInfo(tcpInfo).unacked() == 0;
        } catch (RuntimeException e) {
            return true;
        }
    }

    /**
     * total_retrans as the delta since the window began (since the last report when no window was marked), rtt,
     * rttvar, cwnd, lost and reordering as the values at the end (gauges); nothing without a sample.
     */
    void reportInto(Map<String, Long> out) {
        if (!haveTcpInfo) {
            return;
        }
        long cumulative = retransOfEndedConnections + retrans;
        long from = retransAtWindowStart >= 0 ? retransAtWindowStart : retransReportedCumulative;
        out.put(TcpCounter.TOTAL_RETRANS.key, Math.max(0, cumulative - from));
        retransReportedCumulative = cumulative;
        retransAtWindowStart = -1;
        out.put(TcpCounter.LOST_SEGMENTS.key, lost);
        out.put(TcpCounter.RTT_US.key, rttUs);
        out.put(TcpCounter.RTT_VAR_US.key, rttVarUs);
        out.put(TcpCounter.REORDERING.key, reordering);
        out.put(TcpCounter.SND_CWND_SEGMENTS.key, sndCwnd);
    }
}
