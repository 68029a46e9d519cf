package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.PacketSlots;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.StepResult;
import java.io.IOException;

/**
 * One step recorded message by message ({@code run --packets}): a row per recorded wire sequence number of each
 * flow, in sequence order, with what became of it. Statuses: {@code received}, {@code lost} (never arrived, or
 * arrived after the step's result was final), {@code late} (a first arrival after Tmax or behind the tracking
 * window: lost, and late) and {@code failed} (accepted by the transport, never left). Messages the transport refused
 * take no wire sequence number and have no row. Unrecorded numbers (sampling, or over the row limit) have no row.
 *
 * @param windowStartNs the window's start on the senders' clock; every time of a row is on that clock
 * @param wireEnd       per flow, one past the last wire sequence number
 * @param sent          per flow, the senders' noted send times (null: the senders were on another host)
 */
public record PacketStep(StepResult result, long windowStartNs, long[] wireEnd, FailedRanges[] failures,
                         PacketSlots[] received, SentTimes[] sent) {
    public static final String RECEIVED = "received";
    public static final String LOST = "lost";
    public static final String LATE = "late";
    public static final String FAILED = "failed";
    /** A time a row does not have. */
    public static final long NONE = Long.MIN_VALUE;

    /** Takes the rows, flow by flow, each flow's in sequence order. */
    @FunctionalInterface
    public interface Rows {
        void row(int flow, long sequence, String status, long intendedNs, long sentNs, long receivedNs,
                 boolean reordered, int duplicates, int lateDuplicates) throws IOException;
    }

    public void rows(Rows out) throws IOException {
        for (int f = 0; f < received.length; f++) {
            rows(f, out);
        }
    }

    /** Wire sequence numbers of {@code flow} with no row because they were over its row limit. */
    public long overLimit(int flow) {
        PacketSlots p = received[flow];
        long recordable = (wireEnd[flow] + p.every() - 1) / p.every();
        return Math.max(0, recordable - p.capacity());
    }

    private void rows(int flow, Rows out) throws IOException {
        Counts c = result.flows().get(flow).counts();
        rows(flow, received[flow], sent == null ? null : sent[flow], failures[flow], wireEnd[flow], c.late(),
            c.lateDuplicates(), out);
    }

    /**
     * One flow's rows: {@code late} and {@code lateDuplicates} are what the step's result counted, the tracker's
     * own and those after the step closed; an after-close arrival beyond them came after the result was final and
     * leaves its row lost (or its duplicate uncounted), as in the result.
     */
    static void rows(int flow, PacketSlots p, SentTimes times, FailedRanges failed, long wireEnd, long late,
                     long lateDuplicates, Rows out) throws IOException {
        long lateLimit = late - p.trackerLate();
        long duplicateLimit = lateDuplicates - p.trackerLateDuplicates();
        int rows = (int) Math.min(p.capacity(), (wireEnd + p.every() - 1) / p.every());
        boolean[] lateAfter = new boolean[p.afterCount() == 0 ? 0 : rows];
        int[] duplicatesAfter = new int[p.afterCount() == 0 ? 0 : rows];
        for (int i = 0; i < p.afterCount(); i++) {
            int slot = p.afterSlot(i);
            if (slot >= rows) {
                continue;
            }
            if (p.afterKind(i) == PacketSlots.AFTER_LATE && p.afterRank(i) <= lateLimit) {
                lateAfter[slot] = true;
            } else if (p.afterKind(i) == PacketSlots.AFTER_LATE_DUPLICATE && p.afterRank(i) <= duplicateLimit) {
                duplicatesAfter[slot]++;
            }
        }
        int range = 0;
        for (int slot = 0; slot < rows; slot++) {
            long seq = (long) slot * p.every();
            while (range < failed.size() && failed.end(range) <= seq) {
                range++;
            }
            boolean isFailed = range < failed.size() && failed.first(range) <= seq;
            byte state = p.state(slot);
            boolean isLate = state == PacketSlots.LATE || (lateAfter.length > 0 && lateAfter[slot]);
            boolean arrived = state == PacketSlots.RECEIVED || state == PacketSlots.REORDERED;
            String status = isFailed ? FAILED : arrived ? RECEIVED : isLate ? LATE : LOST;
            boolean stamped = arrived || isLate;
            long intended = stamped ? p.intendedNs(slot) : times != null ? times.intendedNs()[slot] : NONE;
            long actual = stamped ? p.actualNs(slot) : times != null ? times.actualNs()[slot] : NONE;
            if (!stamped && times != null && intended == 0 && actual == 0) {
                intended = NONE; // never handed to the transport (a test's loss seam): nothing was noted
                actual = NONE;
            }
            out.row(flow, seq, status, intended, actual, stamped ? p.arrivalNs(slot) : NONE,
                state == PacketSlots.REORDERED, p.duplicates(slot),
                p.lateDuplicates(slot) + (duplicatesAfter.length > 0 ? duplicatesAfter[slot] : 0));
        }
    }
}
