package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.IntervalTally;
import io.lossprobe.core.pacing.FlowSchedule;
import io.lossprobe.core.plan.SendPattern;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.wire.MessageHeader;

/**
 * A flow's writer that also notes where each interval's messages begin in the wire sequence ({@code --interval}):
 * the window's messages are handed over in schedule order, so each interval's are one run of wire sequence numbers,
 * and the first accepted message whose intended time falls in an interval starts it. Refusals are counted per
 * interval by their intended time. It runs on the sending thread: a comparison per message and an array write per
 * interval, no lock, no I/O, no allocation.
 */
final class IntervalWriter implements MessageWriter {
    private final MessageWriter writer;
    private final long intervalNs;
    private final int intervals;
    /** Per interval, the first wire sequence number of it; [intervals] is the wire end. */
    private final long[] firstWire;
    private final long[] refused;
    private long windowStartNs;
    /** The last interval whose start is known. */
    private int known;
    /** The intended time from which the next interval begins. */
    private long nextBoundaryNs;

    IntervalWriter(MessageWriter writer, long intervalNs, int intervals) {
        this.writer = writer;
        this.intervalNs = intervalNs;
        this.intervals = intervals;
        this.firstWire = new long[intervals + 1];
        this.refused = new long[intervals];
    }

    /** Before the sending thread starts (the executor hand-off publishes it). */
    void windowStartsAt(long windowStartNs) {
        this.windowStartNs = windowStartNs;
        this.known = 0;
        this.nextBoundaryNs = intervals > 1 ? windowStartNs + intervalNs : Long.MAX_VALUE;
    }

    @Override
    public int write(long word0, long word1, long sequence, long intendedNs, long actualNs, long tag) {
        int outcome = writer.write(word0, word1, sequence, intendedNs, actualNs, tag);
        if (MessageHeader.kind(word0) != MessageHeader.KIND_DATA) {
            return outcome;
        }
        if (outcome == ACCEPTED) {
            if (intendedNs >= nextBoundaryNs) {
                advance(sequence, intendedNs);
            }
        } else if (outcome == REFUSED) {
            refused[IntervalTally.index(intendedNs, windowStartNs, intervalNs, intervals)]++;
        }
        return outcome;
    }

    /** A message of a later interval: every interval up to its own begins at its sequence number. */
    private void advance(long sequence, long intendedNs) {
        int to = IntervalTally.index(intendedNs, windowStartNs, intervalNs, intervals);
        for (int i = known + 1; i <= to; i++) {
            firstWire[i] = sequence;
        }
        known = Math.max(known, to);
        nextBoundaryNs = known + 1 < intervals ? windowStartNs + (known + 1) * intervalNs : Long.MAX_VALUE;
    }

    @Override
    public void flush() {
        writer.flush();
    }

    /**
     * The flow's sending per interval, once the step's ledger closed: scheduled by the schedule's intended times,
     * sent and failed by wire sequence ranges, refused as counted.
     *
     * @param wireEnd  the flow's sent plus failed
     * @param rate     the flow's rate (0: as fast as it went, where scheduled is what was tried)
     * @param windowNs the window's nominal length
     * @param offsetNs how far the flow's schedule starts after the window (staggered flows; else 0)
     * @param pattern  the step's send pattern, and {@code key} the flow's window key: the loop's schedule, rebuilt
     */
    SentIntervals finish(long wireEnd, FailedRanges failed, long rate, long windowNs, long offsetNs,
                         long scheduledTotal, SendPattern pattern, long key) {
        for (int i = known + 1; i <= intervals; i++) {
            firstWire[i] = wireEnd;
        }
        firstWire[intervals] = wireEnd;
        long[] scheduled = new long[intervals];
        long[] sent = new long[intervals];
        long[] sendFailed = new long[intervals];
        FlowSchedule schedule = rate > 0
            ? FlowSchedule.of(pattern, windowStartNs + offsetNs, windowNs, rate, key) : null;
        long before = 0;
        for (int i = 0; i < intervals; i++) {
            long onWire = firstWire[i + 1] - firstWire[i];
            long failedHere = failed.countIn(firstWire[i], firstWire[i + 1]);
            sent[i] = onWire - failedHere;
            sendFailed[i] = failedHere + refused[i];
            if (schedule == null) {
                scheduled[i] = sent[i] + sendFailed[i];
            } else {
                long upTo = i == intervals - 1 ? scheduledTotal
                    : Math.min(scheduledTotal, schedule.dueBy(windowStartNs + (i + 1) * intervalNs - 1));
                scheduled[i] = upTo - before;
                before = upTo;
            }
        }
        return new SentIntervals(scheduled, sent, sendFailed);
    }
}
