package io.lossprobe.core.engine;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.SenderLimit;
import io.lossprobe.core.result.SenderLimit.Reason;

/**
 * Why a sender fell short, from its step's counts and {@link SenderLoad}; the rule docs/measurement.md states
 * ("Why the sender fell behind"), checked in this order:
 *
 * <ol>
 *   <li>it kept to its schedule (nothing behind, nothing refused, not saturated): {@link Reason#NONE};</li>
 *   <li>nothing behind but sends refused, or writes blocked for as long as its thread waited for a CPU or for a
 *   tenth of the window (while the transport takes nothing, more CPU would not help): {@link Reason#HELD_BY_KERNEL};
 *   </li>
 *   <li>its thread waited on a run queue at least as long as the missing messages would have taken it on a CPU
 *   (its CPU time per message sent, times the messages behind): {@link Reason#STARVED_OF_CPU};</li>
 *   <li>its thread ran or waited to run for at least 90 % of the window: {@link Reason#AT_CPU_LIMIT};</li>
 *   <li>else {@link Reason#UNKNOWN}. Without the thread's times: {@link Reason#AT_CPU_LIMIT} when the send
 *   cycles took 90 % of the window, else {@link Reason#STARVED_OF_CPU} (late while its sends returned at
 *   once).</li>
 * </ol>
 */
final class SenderLimits {
    /** A thread runnable this share of the window wanted the CPU all the time. */
    static final double BUSY_SHARE = 0.9;
    /** Writes blocked for this share of the window held the sender back, whatever else it lacked. */
    static final double HELD_SHARE = 0.1;

    private SenderLimits() {
    }

    /**
     * @param load        the sending side's figures; null when it reported none (an older server)
     * @param saturated   the step's achieved send rate fell more than 1 % short
     * @param loopWindowNs the window as the send loop ran it (the span when {@code load} is null)
     */
    static SenderLimit of(SenderLoad load, Counts totals, boolean saturated, long loopWindowNs) {
        long behind = totals.behind();
        long refused = totals.sendFailed();
        if (load == null) {
            Reason reason = behind == 0 && refused == 0 && !saturated ? Reason.NONE
                : behind == 0 && refused > 0 ? Reason.HELD_BY_KERNEL : Reason.UNKNOWN;
            return new SenderLimit(reason, behind, refused, loopWindowNs, null, null, null, null, null);
        }
        return new SenderLimit(reason(load, totals, saturated), behind, refused, load.windowNs(),
            load.runQueueWaitNs(), load.cpuNs(), load.sendCallNs(), load.heldNs(), load.blockedSends(),
            load.handOffs(), load.handOffMessages(), load.largestHandOff());
    }

    private static Reason reason(SenderLoad load, Counts totals, boolean saturated) {
        long behind = totals.behind();
        if (behind == 0 && totals.sendFailed() == 0 && !saturated) {
            return Reason.NONE;
        }
        long wait = load.runQueueWaitNs() == null ? 0 : load.runQueueWaitNs();
        if (behind == 0 && totals.sendFailed() > 0
            || load.blockedSends() > 0 && load.heldNs() >= Math.min(wait, HELD_SHARE * load.windowNs())) {
            return Reason.HELD_BY_KERNEL;
        }
        double busy = BUSY_SHARE * load.windowNs();
        if (load.cpuNs() == null || load.runQueueWaitNs() == null) {
            return load.sendCallNs() >= busy ? Reason.AT_CPU_LIMIT : Reason.STARVED_OF_CPU;
        }
        long done = totals.sent() + totals.sendFailed();
        double neededNs = done == 0 ? 0 : (double) load.cpuNs() * behind / done;
        if (wait > 0 && wait >= neededNs) {
            return Reason.STARVED_OF_CPU;
        }
        return load.cpuNs() + wait >= busy ? Reason.AT_CPU_LIMIT : Reason.UNKNOWN;
    }
}
