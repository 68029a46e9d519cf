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
 */
public record SendPacing(long spinNs, long minCycleNs, long blockedBackoffNs, int fullBatchPerFlow) {
    /** Most messages one flow sends per cycle: the send loop's batch limit. */
    public static final int BATCH_LIMIT = 64;
    /** No minimum cycle: a cycle runs as soon as something is due. */
    public static final SendPacing DEFAULT = new SendPacing(10_000, 0, 50_000, BATCH_LIMIT);

    public SendPacing {
        if (spinNs < 0 || minCycleNs < 0 || blockedBackoffNs <= 0 || fullBatchPerFlow < 1) {
            throw new IllegalArgumentException("bad send pacing");
        }
    }

    /** The same pacing with another minimum cycle. */
    public SendPacing withMinCycleNs(long ns) {
        return new SendPacing(spinNs, ns, blockedBackoffNs, fullBatchPerFlow);
    }
}
