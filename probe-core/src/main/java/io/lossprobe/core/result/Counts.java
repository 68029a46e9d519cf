package io.lossprobe.core.result;

/**
 * The accounting counts of one flow, or of all flows of a step added up. See docs/measurement.md.
 *
 * <p>Identities true by construction (they define {@code lost} and {@code behind}): {@code received + lost == sent}
 * and {@code sent + sendFailed + behind == scheduled}. Checks that can fail, asserted by the tests and warned about
 * in a step's result when broken: {@code lostInRuns == lost}, {@code lossEvents == 0} exactly when {@code lost == 0},
 * {@code received <= sent}, {@code late <= lost}.
 *
 * @param lostInRuns     sequence numbers the receiver's tracker finalised as missing, summed over its loss runs:
 *                       an independent count of {@code lost}
 * @param late           first arrivals after their step closed or behind the tracking window (RFC 7680); they are
 *                       part of {@code lost}
 * @param lateDuplicates duplicates that arrived that late; not part of any other count
 * @param corrupt        arrivals whose header does not parse as this run's and flow's
 * @param foreign        arrivals that parse but were not sent by this run's sender (their tag does not verify
 *                       under the run's key, or they came from an address other than the sender's): never
 *                       received, never counted anywhere else
 */
public record Counts(long scheduled, long sent, long sendFailed, long behind, long received, long lost,
                     long lostInRuns, long duplicates, long reordered, long late, long lateDuplicates, long corrupt,
                     long foreign, long lossEvents) {

    public static final Counts ZERO = new Counts(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    public Counts plus(Counts o) {
        return new Counts(scheduled + o.scheduled, sent + o.sent, sendFailed + o.sendFailed, behind + o.behind,
            received + o.received, lost + o.lost, lostInRuns + o.lostInRuns, duplicates + o.duplicates,
            reordered + o.reordered, late + o.late, lateDuplicates + o.lateDuplicates, corrupt + o.corrupt,
            foreign + o.foreign, lossEvents + o.lossEvents);
    }

    public Counts withLate(long newLate, long newLateDuplicates) {
        return new Counts(scheduled, sent, sendFailed, behind, received, lost, lostInRuns, duplicates, reordered,
            newLate, newLateDuplicates, corrupt, foreign, lossEvents);
    }

    /** Lost as a percentage of sent (0 when nothing was sent). */
    public double lossPercent() {
        return sent == 0 ? 0.0 : 100.0 * lost / sent;
    }

    /** The two identities that define {@code lost} and {@code behind}. */
    public boolean identitiesHold() {
        return received + lost == sent && sent + sendFailed + behind == scheduled;
    }

    /**
     * The checks that can fail, in words; empty when all hold. For one flow (a step's totals can hide a broken
     * flow behind another's).
     */
    public java.util.List<String> brokenChecks() {
        java.util.List<String> out = new java.util.ArrayList<>();
        if (lostInRuns != lost) {
            out.add("lost " + lost + " but the receiver's loss runs hold " + lostInRuns + " missing (lostInRuns)");
        }
        if ((lossEvents == 0) != (lost == 0)) {
            out.add("lost " + lost + " with " + lossEvents + " loss event(s)");
        }
        if (received > sent) {
            out.add("received " + received + " distinct messages of " + sent + " sent");
        }
        if (late > lost) {
            out.add("late " + late + " exceeds lost " + lost);
        }
        return out;
    }
}
