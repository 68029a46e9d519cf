package io.lossprobe.core.pacing;

import java.util.Arrays;
import java.util.function.IntToLongFunction;

/**
 * The send loop's closed-loop bookkeeping (echo mode): at most {@code concurrency} requests outstanding per flow,
 * where outstanding is requests on the wire minus {@code repliesOf(flow)} minus those given up on. When a flow has
 * neither sent nor heard a reply for {@code replyTimeoutNs} (Tmax), its outstanding requests are given up on (they
 * count as lost in the accounting anyway) so the flow can go on. Used on the sending thread only, per flow and
 * cycle (never per message).
 */
final class ClosedLoop {
    /** How soon a closed loop looks again: replies arrive on their own time. */
    static final long POLL_NS = 20_000;

    private final int concurrency;
    private final IntToLongFunction repliesOf;
    private final long replyTimeoutNs;
    private final long[] expired;
    private final long[] lastReplies;
    private final long[] lastActivityNs;

    ClosedLoop(int flows, int concurrency, IntToLongFunction repliesOf, long replyTimeoutNs) {
        this.concurrency = concurrency;
        this.repliesOf = repliesOf;
        this.replyTimeoutNs = replyTimeoutNs;
        this.expired = new long[flows];
        this.lastReplies = new long[flows];
        this.lastActivityNs = new long[flows];
    }

    /** The window begins at {@code startNs}: nothing given up on, no reply heard, every flow active now. */
    void beginWindow(long startNs) {
        Arrays.fill(expired, 0);
        Arrays.fill(lastReplies, 0);
        Arrays.fill(lastActivityNs, startNs);
    }

    /** How many more requests {@code flow} may send now, with {@code onWire} requests of the window sent so far. */
    long allowance(int flow, long onWire, long nowNs) {
        long replies = repliesOf.applyAsLong(flow);
        if (replies != lastReplies[flow]) {
            lastReplies[flow] = replies;
            lastActivityNs[flow] = nowNs;
        }
        long outstanding = onWire - replies - expired[flow];
        if (outstanding > 0 && nowNs - lastActivityNs[flow] >= replyTimeoutNs) {
            expired[flow] += outstanding; // no reply within Tmax: lost, stop waiting for them
            outstanding = 0;
        }
        return concurrency - outstanding;
    }

    /** {@code flow} handed messages over at {@code nowNs}. */
    void sent(int flow, long nowNs) {
        lastActivityNs[flow] = nowNs;
    }
}
