package io.lossprobe.core.result;

/**
 * The accounting counts of one flow, or of all flows of a step added up. See docs/measurement.md.
 * Identities: {@code received + lost == sent} and {@code sent + sendFailed + behind == scheduled}.
 */
public record Counts(long scheduled, long sent, long sendFailed, long behind, long received, long lost,
                     long duplicates, long reordered, long late, long corrupt, long lossEvents) {

    public static final Counts ZERO = new Counts(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    public Counts plus(Counts o) {
        return new Counts(scheduled + o.scheduled, sent + o.sent, sendFailed + o.sendFailed, behind + o.behind,
            received + o.received, lost + o.lost, duplicates + o.duplicates, reordered + o.reordered,
            late + o.late, corrupt + o.corrupt, lossEvents + o.lossEvents);
    }

    public Counts withLate(long newLate) {
        return new Counts(scheduled, sent, sendFailed, behind, received, lost, duplicates, reordered, newLate,
            corrupt, lossEvents);
    }

    /** Lost as a percentage of sent (0 when nothing was sent). */
    public double lossPercent() {
        return sent == 0 ? 0.0 : 100.0 * lost / sent;
    }

    public boolean identitiesHold() {
        return received + lost == sent && sent + sendFailed + behind == scheduled;
    }
}
