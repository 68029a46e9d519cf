package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One interval of a step ({@code run --interval}), over all flows. Every message is counted in the interval that
 * holds its intended send time (its place in the schedule), whenever it arrived: a message lost is lost in the
 * interval that was meant to send it, and a stall shows where it began. The intervals of a step partition its
 * window, so each count summed over them is exactly the step's.
 *
 * @param index               0 for the interval that starts with the window
 * @param startNs             where it starts, from the window's start
 * @param endNs               where it ends (the last ends with the window as it really ran)
 * @param scheduled           messages the schedule called for in it
 * @param sent                of those, put on the wire and not reported failed
 * @param sendFailed          refused by the local stack, or reported failed after being accepted
 * @param behind              never handed to the transport: the sender fell behind
 * @param received            distinct messages of it that arrived in time
 * @param lost                {@code sent - received}
 * @param duplicates          extra copies of its messages
 * @param reordered           its messages that arrived after a higher sequence number
 * @param achievedSendRate    sent over the interval's length, messages/s
 * @param achievedReceiveRate received over the interval's length, messages/s
 * @param delay               one-way delay of its messages from their intended send times (same basis as the step's)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record IntervalResult(int index, long startNs, long endNs, long scheduled, long sent, long sendFailed,
                             long behind, long received, long lost, long duplicates, long reordered,
                             double achievedSendRate, double achievedReceiveRate, Latency delay) {
    /** Lost as a percentage of sent (0 when nothing was sent). */
    public double lossPercent() {
        return sent == 0 ? 0.0 : 100.0 * lost / sent;
    }
}
