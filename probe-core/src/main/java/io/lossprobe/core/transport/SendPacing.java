package io.lossprobe.core.transport;

/**
 * How a transport wants the engine's send driver to pace its send loop: when the next send cycle may start.
 *
 * @param spinNs           below this wait the next cycle is queued at once instead of arming a timer (a timer
 *                         wake-up costs tens of microseconds of slack on Linux)
 * @param minCycleNs       the shortest gap between the starts of two cycles that are not behind: waiting lets
 *                         each flow's due messages leave as one batch (one sendmmsg, one GSO send) instead of one
 *                         syscall per message; 0 for none
 * @param blockedBackoffNs the wait when messages are due but no flow took one (every due flow is blocked)
 * @param fullBatchPerFlow messages per flow per cycle that mean "behind": a cycle that full on every flow is
 *                         followed at once by the next, whatever {@code minCycleNs} says
 * @param staggerFlows     offset flow i's schedule by i / (the step's rate over all flows), so the flows' messages
 *                         fall due one after another, evenly, instead of all flows' message k at the same instant
 *                         (where the last of 48 leaves 48 syscalls after its intended time)
 * @param earlyWakeNs      arm the timer up to this much before the next cycle is due (at most an eighth of the
 *                         wait, so the spin that follows costs at most that share of the thread) and queue the rest
 *                         at once: the wake-up's own latency is then spent before the intended time, not after it;
 *                         0 for none
 */
public record SendPacing(long spinNs, long minCycleNs, long blockedBackoffNs, int fullBatchPerFlow,
                         boolean staggerFlows, long earlyWakeNs) {
    /** Most messages one flow sends per cycle: the send loop's batch limit. */
    public static final int BATCH_LIMIT = 64;
    /** No minimum cycle: a cycle runs as soon as something is due. */
    public static final SendPacing DEFAULT = new SendPacing(10_000, 0, 50_000, BATCH_LIMIT, false, 0);
    /**
     * The early wake-up the UDP transport's default mode uses: timers armed 20 us ahead (an eighth of shorter
     * waits), the rest spun. Measured on this 2-core VM at 1k/s, one flow, echo: a timer-woken sender is 12 us
     * late at the median even with 1 ns of timer slack; the spin costs at most 2% of a core at 1k/s.
     */
    public static final long EARLY_WAKE_NS = 20_000;
    /**
     * The precision timing mode: the sending thread sleeps on a timer until shortly before the next message is due
     * (200 us, at most an eighth of the wait) and spins the rest, its cycle queued again at once until then; waits
     * up to 250 us are spun whole. The message leaves within a turn of the loop of its intended time, not a timer's
     * slack and a wake-up later (tens of microseconds, hundreds at the tail). Above about 3,500 messages/s per
     * sending thread it spins all the time; at 1k/s it spins an eighth of it and sleeps the rest, which on a small
     * host leaves the CPUs to the receivers, whose spinning a round trip needs more (measured on 2 CPUs: with the
     * sender spinning too, the round trip's p99 was the 4 ms scheduler tick). No minimum cycle: each message leaves
     * at its own intended time, one syscall each, and the flows' schedules are staggered so that no two fall due at
     * once.
     */
    public static final SendPacing PRECISION = new SendPacing(250_000, 0, 50_000, BATCH_LIMIT, true, 200_000);

    /** Flows not staggered, no early wake-up. */
    public SendPacing(long spinNs, long minCycleNs, long blockedBackoffNs, int fullBatchPerFlow) {
        this(spinNs, minCycleNs, blockedBackoffNs, fullBatchPerFlow, false, 0);
    }

    public SendPacing {
        if (spinNs < 0 || minCycleNs < 0 || blockedBackoffNs <= 0 || fullBatchPerFlow < 1 || earlyWakeNs < 0) {
            throw new IllegalArgumentException("bad send pacing");
        }
    }

    /** The same pacing with the flows' schedules staggered or not. */
    public SendPacing withStaggerFlows(boolean on) {
        return new SendPacing(spinNs, minCycleNs, blockedBackoffNs, fullBatchPerFlow, on, earlyWakeNs);
    }

    /** The same pacing with another minimum cycle. */
    public SendPacing withMinCycleNs(long ns) {
        return new SendPacing(spinNs, ns, blockedBackoffNs, fullBatchPerFlow, staggerFlows, earlyWakeNs);
    }

    /** The same pacing with another early wake-up. */
    public SendPacing withEarlyWakeNs(long ns) {
        return new SendPacing(spinNs, minCycleNs, blockedBackoffNs, fullBatchPerFlow, staggerFlows, ns);
    }

    /**
     * The same pacing for a sending thread whose step sends {@code messagesPerSecond} in all: without its minimum
     * cycle ({@link #minCycleAt}) when that would hold messages for a later cycle while carrying fewer than two a
     * cycle on average.
     */
    public SendPacing atRate(double messagesPerSecond) {
        long cycle = minCycleAt(minCycleNs, messagesPerSecond);
        return cycle == minCycleNs ? this : withMinCycleNs(cycle);
    }

    /**
     * The minimum cycle a sending thread keeps at {@code messagesPerSecond}: {@code minCycleNs} once a cycle of that
     * length carries two messages or more on average, else 0. A minimum cycle saves wake-ups and system calls by
     * sending a cycle's due messages together, but a message that falls due just after a cycle began waits for the
     * next: below two messages a cycle it saves little and that wait is most of the delay. Measured on loopback at
     * 30k/s (a 50 us cycle carries 1.5): delay p50 36 us with the cycle, 16 us without (sockperf under-load: 15-17
     * us), the thread's CPU about the same.
     */
    public static long minCycleAt(long minCycleNs, double messagesPerSecond) {
        return messagesPerSecond * minCycleNs >= 2e9 ? minCycleNs : 0;
    }

    /**
     * How long to arm a timer for when the next cycle is {@code waitNs} away: the wait less the early wake-up (at
     * most an eighth of it), or 0 when that is short enough to queue the cycle at once and spin.
     */
    public long timerNs(long waitNs) {
        long armed = waitNs - Math.min(earlyWakeNs, waitNs / 8);
        return armed <= spinNs ? 0 : armed;
    }
}
