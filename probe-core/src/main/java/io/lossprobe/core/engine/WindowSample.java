package io.lossprobe.core.engine;

import io.lossprobe.core.counters.EgressQdisc;
import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.pacing.NanoClock;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The host's counters at the window's start, the senders' egress queue's drops (-1 unknown), and how long
 * after the window's first message the sampling finished (0 when sampled before it): counter deltas may miss
 * that much of the window's beginning, unless no loss counter moved across it.
 *
 * @param movedAcross with a warm-up, the loss counters ({@link HostCounters#countsLoss}) that moved between the
 *                    step's first message and this sample: when none did, nothing was dropped, refused or repaired
 *                    in the moments the skew spans, so the loss deltas are exact whatever the skew. Null when not
 *                    known (sampled before the first message, or a side on another host)
 */
record WindowSample(HostCounters.Sample host, long egressDrops, long skewNs, List<String> movedAcross) {
    /** The step's counters before its first message, for {@link #movedAcross}. */
    record Start(HostCounters.Sample host, long egressDrops) {
        static Start take(Supplier<HostCounters.Sample> hostCounters, EgressQdisc egress) {
            return new Start(hostCounters.get(), egress.drops());
        }
    }

    /**
     * Samples what the step's counter deltas start from: the receiving sockets' drops first (the figure most
     * sensitive to the moment; every receive side's), then the host's counters, then the sending transports'.
     *
     * @param windowStartNs when the window began, or {@link Long#MIN_VALUE} when sampling before the first message
     * @param start         the step's counters before its first message, or null when not taken
     */
    static WindowSample take(StepSides sides, EgressQdisc egress, NanoClock clock,
                             Supplier<HostCounters.Sample> hostCounters, long windowStartNs, Start start)
        throws Exception {
        sides.beginReceiversWindow();
        HostCounters.Sample host = hostCounters.get();
        sides.beginSendersWindow();
        long egressDrops = egress.drops(); // forks tc where the egress queue is a real qdisc: last, and only here
        long skew = windowStartNs == Long.MIN_VALUE ? 0 : Math.max(0, clock.nanoTime() - windowStartNs);
        List<String> moved = null;
        if (start != null) {
            moved = new ArrayList<>(host.lossMovedSince(start.host()));
            if (egressDrops != start.egressDrops()) {
                moved.add(egress.counterKey());
            }
        }
        return new WindowSample(host, egressDrops, skew, moved);
    }

    /** Whether the deltas may miss part of the window: sampled late, and no proof that nothing moved meanwhile. */
    boolean skewMatters() {
        return skewNs > StepWarnings.WINDOW_SKEW_WARN_NS && (movedAcross == null || !movedAcross.isEmpty());
    }
}
