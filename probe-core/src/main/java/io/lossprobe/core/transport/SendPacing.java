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
 */
public record SendPacing(long spinNs, long minCycleNs, long blockedBackoffNs, int fullBatchPerFlow,
                         boolean staggerFlows) {
    /** Most messages one flow sends per cycle: the send loop's batch limit. */
    public static final int BATCH_LIMIT = 64;
    /** No minimum cycle: a cycle runs as soon as something is due. */
    public static final SendPacing DEFAULT = new SendPacing(10_000, 0, 50_000, BATCH_LIMIT, false);
    /**
     * The precision timing mode, for a sending executor that does not sleep while a step runs (it busy-polls, so
     * a cycle scheduled for a message's intended time starts then, within a turn of its loop, not up to a timer's
     * slack and a wake-up later: 50 us and more on Linux). No minimum cycle: each message leaves at its own intended
     * time, one syscall each, and the flows' schedules are staggered so that no two fall due at once. A wait of at
     * most 1 us is not worth scheduling: the next cycle is queued at once.
     */
    public static final SendPacing PRECISION = new SendPacing(1_000, 0, 50_000, BATCH_LIMIT, true);

    /** Flows not staggered. */
    public SendPacing(long spinNs, long minCycleNs, long blockedBackoffNs, int fullBatchPerFlow) {
        this(spinNs, minCycleNs, blockedBackoffNs, fullBatchPerFlow, false);
    }

    public SendPacing {
        if (spinNs < 0 || minCycleNs < 0 || blockedBackoffNs <= 0 || fullBatchPerFlow < 1) {
            throw new IllegalArgumentException("bad send pacing");
        }
    }

    /** The same pacing with another minimum cycle. */
    public SendPacing withMinCycleNs(long ns) {
        return new SendPacing(spinNs, ns, blockedBackoffNs, fullBatchPerFlow, staggerFlows);
    }
}
