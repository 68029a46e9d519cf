package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.pacing.FlowSendCounts;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.transport.TransportReport;
import java.util.Map;

/**
 * The sending half of one transport's run as the engine sees it: paced in this process ({@link LocalSendSide}),
 * or on the server of a {@code --reverse} run. Every method runs on the engine's thread; none runs anything on the
 * sending thread while it sends.
 */
public interface SendSide extends AutoCloseable {
    /** Socket buffers granted and similar facts, for the results' environment. */
    Map<String, Long> environment();

    /**
     * Prepares a step (reconnects, reply accounting): warm-up, then the measured window, each flow at its rate in
     * {@code start}, recording the messages that never left in {@code start.failures()}. Nothing is sent until
     * {@link #start}. Senders that run only the plan's own warm-up and window throw
     * {@link UnsupportedOperationException} for a step with others (a rate search's short trials).
     */
    void beginStep(StepStart start) throws Exception;

    /**
     * The open step's failure ledger, one per flow ({@link StepStart#failures()}): accepted messages that never
     * left. Receivers skip what it records; it keeps filling until {@link #finish}.
     */
    FailedRanges[] failures();

    /** The other host's clock minus this one's, estimated now; null when the senders are in this process. */
    default io.lossprobe.core.result.ClockOffset clockOffset() throws Exception {
        return null;
    }

    /**
     * Once, after both sides opened and before the first step: senders that send only where their receivers
     * reached them from (a receiver behind a NAT, docs/two-hosts.md "Behind a NAT") wait here until every flow's
     * receiver did, the receivers sending their punches ({@link io.lossprobe.core.wire.Punch}) under
     * {@code passKey}. Nothing to do by default.
     */
    default void reachFrom(ReceiveSide receivers, io.lossprobe.core.wire.MessageAuth passKey, int runId)
        throws Exception {
    }

    /** Starts sending; returns when the measured window begins, on the engine's clock. */
    long start() throws Exception;

    /**
     * Starts sending with the warm-up beginning at {@code atNs} on the engine's clock (nothing is sent before):
     * the window begins warm-up later, as every per-interval count expects ({@code --interval}).
     */
    default long start(long atNs) throws Exception {
        throw new UnsupportedOperationException("these senders cannot start at a given time");
    }

    /** The window has begun: sample the sending transport's counters (on the engine's thread). */
    void beginWindow() throws Exception;

    /** Echo mode: replies received so far per flow in the open step; null in stream mode. */
    default long[] replyProgress() throws Exception {
        return null;
    }

    /** Echo mode: closes the replies' accounting at each flow's wire end; null in stream mode. */
    default io.lossprobe.core.accounting.FlowReceiver.Summary[] closeReplies(int step, long[] wireEnd)
        throws Exception {
        return null;
    }

    /**
     * Notes the send times of every {@code every}-th data message, {@code capacity} per flow at most, from the next
     * step on ({@code --packets}; 0 stops it). Senders on another host do not, and ignore it.
     */
    default void capturePackets(int every, int capacity) {
    }

    /** The last step's noted send times per flow (once its sending ended), or null when none were noted. */
    default SentTimes[] sentTimes() {
        return null;
    }

    /** Waits up to {@code timeoutNs} for the step's sending to end; true when it has. */
    boolean awaitDone(long timeoutNs) throws Exception;

    /** Messages sent so far in the window. */
    long sentProgress() throws Exception;

    /** Stops the step's sending early (Ctrl-C). */
    void abort() throws Exception;

    /** After {@link #awaitDone} returned true: messages each flow sent, as far as known now (for the drain). */
    long[] sent() throws Exception;

    /**
     * After the drain: closes the step's failure ledger (later failures of this step are counted, not charged)
     * and returns what the step sent, with the transport's counters once they settled.
     */
    Outcome finish() throws Exception;

    @Override
    void close() throws Exception;

    /**
     * What a step's sending produced.
     *
     * @param windowNs           the measured window as it really ran
     * @param lag                how late each window message was handed to the transport
     * @param failedAfterClose   messages of earlier steps whose failure surfaced after their step closed (they
     *                           were counted there as sent and lost)
     * @param intervals          the sending per interval over all flows ({@code --interval}), else null
     * @param load               what the sending cost its thread, for why it fell short; null when not reported
     */
    record Outcome(FlowSendCounts[] counts, long windowNs, Latency lag, TransportReport report,
                   long failedAfterClose, SentIntervals intervals, SenderLoad load) {
        public Outcome(FlowSendCounts[] counts, long windowNs, Latency lag, TransportReport report,
                       long failedAfterClose, SenderLoad load) {
            this(counts, windowNs, lag, report, failedAfterClose, null, load);
        }

        /** Each flow's wire end: sent plus the failed ranges, the numbers the receiver finalises. */
        public long[] wireEnds(FailedRanges[] failures) {
            long[] out = new long[counts.length];
            for (int i = 0; i < out.length; i++) {
                out[i] = counts[i].sent() + failures[i].total();
            }
            return out;
        }
    }
}
