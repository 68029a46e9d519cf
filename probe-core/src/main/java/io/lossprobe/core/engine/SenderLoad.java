package io.lossprobe.core.engine;

/**
 * What a step's sending cost the sending thread, over the window: the figures {@link SenderLimits} explains a
 * shortfall with (the results' {@code senderLimit}).
 *
 * @param windowNs       the span the thread's times cover: from their sample as the window began to the one when
 *                       sending ended
 * @param runQueueWaitNs the sending thread's time waiting on a run queue in that span; null when unreadable
 * @param cpuNs          its time on a CPU in that span; null when unreadable
 * @param sendCallNs     time inside the send loop's cycles in the window
 * @param heldNs         time from each cycle with a blocked write to the next cycle
 * @param blockedSends   writes the transport answered BLOCKED in the window
 * @param handOffs       flushes in the window that handed a flow's messages to the transport together; null when
 *                       not reported (an older server)
 * @param handOffMessages the messages those carried; null when not reported
 * @param largestHandOff the most one carried; null when not reported
 */
public record SenderLoad(long windowNs, Long runQueueWaitNs, Long cpuNs, long sendCallNs, long heldNs,
                         long blockedSends, Long handOffs, Long handOffMessages, Long largestHandOff) {
    /** A load without hand-off figures (a server that does not report them). */
    public SenderLoad(long windowNs, Long runQueueWaitNs, Long cpuNs, long sendCallNs, long heldNs,
                      long blockedSends) {
        this(windowNs, runQueueWaitNs, cpuNs, sendCallNs, heldNs, blockedSends, null, null, null);
    }
}
