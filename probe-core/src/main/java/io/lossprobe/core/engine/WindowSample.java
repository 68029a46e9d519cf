package io.lossprobe.core.engine;

import io.lossprobe.core.counters.EgressQdisc;
import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.pacing.NanoClock;

/**
 * The host's counters at the window's start, the senders' egress queue's drops (-1 unknown), and how long
 * after the window's first message the sampling finished (0 when sampled before it): counter deltas may miss
 * that much of the window's beginning.
 */
record WindowSample(HostCounters.Sample host, long egressDrops, long skewNs) {
    /**
     * Samples what the step's counter deltas start from: the receiving sockets' drops first (the figure most
     * sensitive to the moment), then the host's counters, then the sending transport's.
     *
     * @param windowStartNs when the window began, or {@link Long#MIN_VALUE} when sampling before the first message
     */
    static WindowSample take(ReceiveSide receiver, SendSide sender, EgressQdisc egress, NanoClock clock,
                             long windowStartNs) throws Exception {
        receiver.beginWindow();
        HostCounters.Sample host = HostCounters.sample();
        sender.beginWindow();
        long egressDrops = egress.drops(); // forks tc where the egress queue is a real qdisc: last, and only here
        long skew = windowStartNs == Long.MIN_VALUE ? 0 : Math.max(0, clock.nanoTime() - windowStartNs);
        return new WindowSample(host, egressDrops, skew);
    }
}
