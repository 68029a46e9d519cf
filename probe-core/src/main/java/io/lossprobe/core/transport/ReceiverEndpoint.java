package io.lossprobe.core.transport;

import java.util.Map;

/** The receiving half of a transport: every flow's receiver, bound and delivering to its FlowReceiver. */
public interface ReceiverEndpoint extends AutoCloseable {
    /**
     * Runs {@code action} on the receiving thread(s), with no message being accounted meanwhile, and waits for it.
     * The engine begins and closes each step's accounting through this.
     */
    void onReceiveThread(Runnable action) throws Exception;

    /**
     * Stops (true) or resumes (false) reading from the network, leaving data to queue in the kernel or the
     * transport. For tests that stall a receiver.
     */
    void setPaused(boolean paused) throws Exception;

    /** Called before a step's traffic starts. */
    default void beginStep(int step) throws Exception {
    }

    /**
     * Called when the measured window starts, on the engine's thread (never a sending or receiving thread): sample
     * the counters whose deltas {@link #endStep} reports. With no warm-up it runs before the first message.
     */
    default void beginWindow() throws Exception {
    }

    /**
     * This step's transport counters over the window, as deltas; called after the step's accounting closed. A
     * transport whose repair counters (NAKs) can still move waits here, bounded, until they settle.
     */
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
