package io.lossprobe.core.transport;

import java.util.Map;

/**
 * What the engine asks of either half of a transport around each step, always on the engine's thread (never a
 * sending or receiving thread).
 */
public interface StepEndpoint extends AutoCloseable {
    /** Called before a step's traffic starts (reconnect what died, say). */
    default void beginStep(int step) throws Exception {
    }

    /**
     * Called when the measured window starts: sample the counters whose deltas {@link #endStep} reports. Must not
     * stop the traffic. With no warm-up it runs before the first message.
     */
    default void beginWindow() throws Exception {
    }

    /**
     * This step's transport counters over the window, as deltas (gauges as values at the end); called after the
     * step's sending ended and its accounting closed. A transport whose repair counters (retransmits, NAKs) can
     * still move waits here, bounded, until they settle.
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
