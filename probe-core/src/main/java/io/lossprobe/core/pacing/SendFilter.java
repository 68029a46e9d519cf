package io.lossprobe.core.pacing;

/**
 * Test-only loss injection in the send path: a message the filter drops is counted as sent, then never handed
 * to the transport, so the receiver must report exactly that loss.
 */
@FunctionalInterface
public interface SendFilter {
    SendFilter NONE = (flow, sequence) -> false;

    boolean drop(int flow, long sequence);
}
