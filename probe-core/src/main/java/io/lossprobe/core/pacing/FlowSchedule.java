package io.lossprobe.core.pacing;

/**
 * The pacing schedule of one flow in one phase: message {@code k} is due at
 * {@code startNs + floor(k * 1e9 / ratePerSecond)}, and the phase schedules {@code floor(duration * rate / 1e9)}
 * messages (exactly {@code rate x seconds} for whole seconds). A rate of 0 means "as fast as possible": every
 * message is due at once and the count is open.
 */
public final class FlowSchedule {
    private static final long NANOS = 1_000_000_000L;

    private final long startNs;
    private final long ratePerSecond;
    private final long scheduled;

    public FlowSchedule(long startNs, long durationNs, long ratePerSecond) {
        if (ratePerSecond < 0 || durationNs < 0) {
            throw new IllegalArgumentException("negative rate or duration");
        }
        this.startNs = startNs;
        this.ratePerSecond = ratePerSecond;
        this.scheduled = ratePerSecond == 0 ? Long.MAX_VALUE : scale(durationNs, ratePerSecond);
    }

    /** {@code ns * rate / 1e9} without overflow for any duration up to days and rates up to billions. */
    static long scale(long ns, long ratePerSecond) {
        return (ns / NANOS) * ratePerSecond + (ns % NANOS) * ratePerSecond / NANOS;
    }

    /**
     * Staggered starts: fills {@code offsetNs[i]}, how far flow i's schedule starts after the phase, with
     * {@code i * 1e9 / R} ns, R the rate over all flows, so the flows' messages fall due one at a time, evenly spaced,
     * rather than every flow's message k at the same instant. Each flow keeps its rate and its count; its offset is
     * less than one of its own intervals, so its last message still falls due inside the phase. At "max" (every rate
     * 0) the offsets are left as they are.
     */
    static void staggerOffsets(long[] flowRates, long[] offsetNs) {
        long total = 0;
        for (long r : flowRates) {
            total += r;
        }
        if (total == 0) {
            return;
        }
        for (int i = 0; i < offsetNs.length; i++) {
            long interval = flowRates[i] == 0 ? 0 : NANOS / flowRates[i];
            offsetNs[i] = Math.min(i * NANOS / total, Math.max(0, interval - 1));
        }
    }

    public boolean unlimited() {
        return ratePerSecond == 0;
    }

    /** Messages this phase calls for ({@code Long.MAX_VALUE} when unlimited). */
    public long scheduled() {
        return scheduled;
    }

    /** How many messages are due by {@code nowNs}: those whose intended time is at or before now. */
    public long dueBy(long nowNs) {
        if (nowNs < startNs) {
            return 0;
        }
        if (ratePerSecond == 0) {
            return Long.MAX_VALUE;
        }
        // k is due when floor(k * 1e9 / rate) <= elapsed, i.e. k < (elapsed + 1) * rate / 1e9.
        long elapsedPlusOne = nowNs - startNs + 1;
        long whole = (elapsedPlusOne / NANOS) * ratePerSecond;
        long part = ((elapsedPlusOne % NANOS) * ratePerSecond + NANOS - 1) / NANOS;
        return Math.min(scheduled, whole + part);
    }

    /** Intended send time of message {@code sequence}; for an unlimited schedule the caller uses "now". */
    public long intendedTimeNs(long sequence) {
        return startNs + (sequence / ratePerSecond) * NANOS + (sequence % ratePerSecond) * NANOS / ratePerSecond;
    }

    public long startNs() {
        return startNs;
    }

    public long ratePerSecond() {
        return ratePerSecond;
    }
}
