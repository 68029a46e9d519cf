package io.lossprobe.core.transport;

import io.lossprobe.core.pacing.SendLoop;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** The sending half of a transport: one writer per flow and a thread to run the send loop on. */
public interface SenderEndpoint extends AutoCloseable {
    /**
     * {@link #environment()} key: 1 when a send that the host's own egress queue drops fails (ENOBUFS), so its
     * messages count in sendFailed; 0 when the kernel reports success and they count as lost. Absent means 0.
     */
    String EGRESS_DROPS_REPORTED = "egressDropsReported";
    /**
     * {@link #environment()} key: the most messages one packet in the host's egress queue carries (a UDP GSO send
     * is one packet there). Absent means unknown, possibly several.
     */
    String MESSAGES_PER_PACKET_MAX = "messagesPerPacketMax";

    /** The writer for flow {@code flow}; called once per step before {@link #drive}. */
    MessageWriter writer(int flow);

    /**
     * Runs {@code loop.doWork(System.nanoTime())} on the sending thread until the loop is done, sleeping between
     * cycles where the schedule allows. Completes exceptionally if the transport fails.
     */
    CompletableFuture<Void> drive(SendLoop loop);

    /**
     * Echo mode: runs {@code action} on the thread that feeds replies to {@link SenderSpec#replies()}, with no
     * reply being accounted meanwhile, and waits for it.
     */
    default void onReplyThread(Runnable action) throws Exception {
        throw new UnsupportedOperationException("this transport has no echo mode");
    }

    /** Called before a step's traffic starts. */
    default void beginStep(int step) throws Exception {
    }

    /** Called when the measured window starts, on the sending thread; sample counters here. */
    default void beginWindow() throws Exception {
    }

    /** This step's transport counters, as deltas; called after the step's sending ended. */
    default TransportReport endStep() throws Exception {
        return TransportReport.EMPTY;
    }

    /** Socket buffer sizes and similar facts granted by the OS, for the results' environment. */
    default Map<String, Long> environment() {
        return Map.of();
    }

    @Override
    void close() throws Exception;
}
