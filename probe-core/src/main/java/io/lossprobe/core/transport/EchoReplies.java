package io.lossprobe.core.transport;

import static io.lossprobe.core.transport.CounterDescriptor.Category.REPLY_LOSS;
import static io.lossprobe.core.transport.CounterDescriptor.Category.TRAFFIC;
import static io.lossprobe.core.transport.CounterDescriptor.counter;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.wire.MessageHeader;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Echo mode's responder policy and its one reply-loss vocabulary, the same for every transport. A responder
 * answers every request its flow's accounting accepted ({@code FlowReceiver.onMessage} returned true: first
 * arrivals of the open step, and the step's warm-ups, whose replies warm the way back), with
 * {@link MessageHeader#replyOf} of the request's word 0. It then says here whether the reply went out
 * ({@link Flow#sent}) or not ({@link Flow#dropped}: a full socket, a closed connection, a back-pressured
 * publication); a warm-up's reply is never counted, as its request is not. Counts are taken from
 * {@link #beginStep} to {@link #report}: with warm-ups left out, that is the measured window exactly (requests
 * accepted after the step closed are late and never answered).
 *
 * <p>Transport-specific reasons for a drop (Aeron's back pressure against not connected) may stay the transport's
 * own sub-counters; the totals are {@link #SENT} and {@link #DROPPED}, the latter of category REPLY_LOSS.
 */
public final class EchoReplies {
    /** Replies the responder handed to the transport, warm-ups apart. */
    public static final String SENT = "echo.repliesSent";
    /** Replies to counted requests that the responder could not send: reply loss at the responder. */
    public static final String DROPPED = "echo.repliesDropped";
    /** The declarations every transport with echo mode adds to its {@link Transport#counters()}. */
    public static final List<CounterDescriptor> COUNTERS = List.of(
        counter(SENT, TRAFFIC, "messages", "echo mode: replies the responder sent (warm-ups apart)"),
        counter(DROPPED, REPLY_LOSS, "messages",
            "echo mode: replies to counted requests the responder could not send (socket full, connection closed, "
                + "publication back-pressured or not connected)"));

    /** A transport's {@code own} counter declarations followed by {@link #COUNTERS}. */
    public static List<CounterDescriptor> withCounters(List<CounterDescriptor> own) {
        return CounterDescriptor.concat(own, COUNTERS);
    }

    private final Flow[] flows;
    private final long[] sentAtStep;
    private final long[] droppedAtStep;

    /** @param flows the flows' accounting, which decides what is answered and tags the replies */
    public EchoReplies(FlowReceiver[] flows) {
        this.flows = new Flow[flows.length];
        for (int i = 0; i < flows.length; i++) {
            this.flows[i] = new Flow(flows[i]);
        }
        this.sentAtStep = new long[flows.length];
        this.droppedAtStep = new long[flows.length];
    }

    /** Flow {@code i}'s counts, written by the one thread that reads the flow's requests. */
    public Flow flow(int i) {
        return flows[i];
    }

    /**
     * A step begins, before its traffic: counts from here on are reported. Not at the window's start, which the
     * engine may sample after the window's first message (its replies would be missed). Any thread.
     */
    public void beginStep() {
        for (int i = 0; i < flows.length; i++) {
            sentAtStep[i] = flows[i].sent.get();
            droppedAtStep[i] = flows[i].dropped.get();
        }
    }

    /**
     * Puts the window's counts into a step's report: per flow into {@code perFlow} (maps created where missing;
     * the maps present must be mutable) and summed into {@code totals}. Any thread.
     */
    public void report(Map<String, Long> totals, Map<Integer, Map<String, Long>> perFlow) {
        long sent = 0;
        long dropped = 0;
        for (int i = 0; i < flows.length; i++) {
            long s = flows[i].sent.get() - sentAtStep[i];
            long d = flows[i].dropped.get() - droppedAtStep[i];
            Map<String, Long> f = perFlow.computeIfAbsent(i, k -> new HashMap<>());
            f.put(SENT, s);
            f.put(DROPPED, d);
            sent += s;
            dropped += d;
        }
        totals.put(SENT, sent);
        totals.put(DROPPED, dropped);
    }

    /**
     * One flow's replies: their tags, and what became of them. A single writer (the flow's receiving thread) updates
     * the counts without locking; readers on other threads see each count whole.
     */
    public static final class Flow {
        private final FlowReceiver accounting;
        private final AtomicLong sent = new AtomicLong();
        private final AtomicLong dropped = new AtomicLong();

        Flow(FlowReceiver accounting) {
            this.accounting = accounting;
        }

        /** The tag of the reply with word 0 {@code replyWord0} ({@link MessageHeader#replyOf}) to a request. */
        public long tag(long replyWord0, long word1, long sequence, long sendTimeNs, long actualSendNs) {
            return accounting.replyTag(replyWord0, word1, sequence, sendTimeNs, actualSendNs);
        }

        /** The reply to the request with word 0 {@code requestWord0} went out. */
        public void sent(long requestWord0) {
            if (!MessageHeader.isWarmup(requestWord0)) {
                sent.lazySet(sent.get() + 1);
            }
        }

        /** The reply to the request with word 0 {@code requestWord0} could not be sent. */
        public void dropped(long requestWord0) {
            if (!MessageHeader.isWarmup(requestWord0)) {
                dropped.lazySet(dropped.get() + 1);
            }
        }

        /** {@code n} counted replies (warm-ups already left out) went out together. */
        public void sentCounted(long n) {
            sent.lazySet(sent.get() + n);
        }

        /** {@code n} counted replies (warm-ups already left out) could not be sent. */
        public void droppedCounted(long n) {
            dropped.lazySet(dropped.get() + n);
        }

        /** Replies sent over the flow's life, warm-ups apart. */
        public long sent() {
            return sent.get();
        }

        /** Replies dropped over the flow's life, warm-ups apart. */
        public long dropped() {
            return dropped.get();
        }
    }
}
