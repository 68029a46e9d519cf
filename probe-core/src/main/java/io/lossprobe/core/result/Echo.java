package io.lossprobe.core.result;

/**
 * Request/response figures of an echo-mode flow or step. Requests are the messages sent; the responder answers
 * each first arrival once, so {@code requestsSent == requestsReceived + requestsLost} and
 * {@code requestsReceived == repliesReceived + repliesLost}: loss is attributed to the direction it happened in.
 *
 * @param roundTripLost requests without a reply before the step closed (Tmax after the window)
 * @param tps           replies received per second of window: transactions per second
 * @param rtt           round trip from the request's intended send time to its reply's arrival, on the
 *                      requester's clock (no clock offset, and no coordinated omission)
 * @param rttTransit    round trip from the request's actual send time (when the send loop handed it over) to its
 *                      reply's arrival: the sender's lag left out, as a tool that times from its own send would
 *                      report it; absent in files written before it existed
 */
@com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
public record Echo(long requestsSent, long requestsReceived, long requestsLost, long repliesReceived,
                   long repliesLost, long roundTripLost, long duplicateReplies, long reorderedReplies,
                   long lateReplies, double tps, Latency rtt, Latency rttTransit) {

    /** Figures without the round trip from the actual send time. */
    public Echo(long requestsSent, long requestsReceived, long requestsLost, long repliesReceived,
                long repliesLost, long roundTripLost, long duplicateReplies, long reorderedReplies,
                long lateReplies, double tps, Latency rtt) {
        this(requestsSent, requestsReceived, requestsLost, repliesReceived, repliesLost, roundTripLost,
            duplicateReplies, reorderedReplies, lateReplies, tps, rtt, null);
    }

    public boolean identitiesHold() {
        return requestsSent == requestsReceived + requestsLost && requestsReceived == repliesReceived + repliesLost
            && roundTripLost == requestsSent - repliesReceived;
    }
}
