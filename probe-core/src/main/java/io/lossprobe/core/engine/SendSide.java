package io.lossprobe.core.engine;

import io.lossprobe.core.pacing.SendFilter;
import io.lossprobe.core.pacing.SendLoop;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.transport.TransportReport;
import java.util.Map;

/**
 * The sending half of one transport's run as the engine sees it: paced in this process ({@link LocalSendSide}),
 * or on the server of a {@code --reverse} run.
 */
public interface SendSide extends AutoCloseable {
    /** Socket buffers granted and similar facts, for the results' environment. */
    Map<String, Long> environment();

    /**
     * Starts a step: warm-up, then the measured window, each flow at its rate (0 = max). {@code onWindowStart}
     * runs when the window begins, as close to the last warm-up message as the side can manage.
     */
    void start(int step, long[] flowRates, int[] windowBits, SendFilter filter, Runnable onWindowStart)
        throws Exception;

    /** Echo mode: replies received so far per flow in the open step; null in stream mode. */
    default long[] replyProgress() throws Exception {
        return null;
    }

    /** Echo mode: closes the replies' accounting; every request below {@code sent[i]} has its reply or not. */
    default io.lossprobe.core.accounting.FlowReceiver.Summary[] closeReplies(int step, long[] sent) throws Exception {
        return null;
    }

    /** Waits up to {@code timeoutNs} for the step's sending to end; true when it has. */
    boolean awaitDone(long timeoutNs) throws Exception;

    /** Messages sent so far in the window. */
    long sentProgress() throws Exception;

    /** Stops the step's sending early (Ctrl-C). */
    void abort() throws Exception;

    /** After {@link #awaitDone} returned true: what the step sent. */
    Outcome finish() throws Exception;

    @Override
    void close() throws Exception;

    /**
     * What a step's sending produced.
     *
     * @param windowNs the measured window as it really ran
     * @param lag      how late the sender was when it sent
     */
    record Outcome(SendLoop.FlowSendCounts[] counts, long windowNs, Latency lag, TransportReport report) {
    }
}
