package io.lossprobe.core.transport;

/**
 * Where a transport reports messages it had {@link MessageWriter#ACCEPTED} and then learned never left: an error
 * that surfaces after {@code write} returned, when a batch is flushed or a connection dies. The sequences were
 * consumed on the wire's sequence space but never sent, so the receiver must skip them: they are neither received
 * nor lost, and the step counts them as {@code sendFailed}. A failure is charged to the step that sent the
 * messages, whenever it surfaces.
 *
 * <p>Called on the thread that completes the transport's writes (for the Netty transports, the sending event loop).
 * Must not block.
 */
@FunctionalInterface
public interface SendFailureListener {
    /** Ignores every failure (for tests of transports that never fail after accepting). */
    SendFailureListener NONE = (flow, step, firstSequence, count) -> { };

    /**
     * @param step          the step whose data messages failed (warm-up messages are not reported)
     * @param firstSequence the first failed wire sequence number
     * @param count         how many consecutive sequence numbers from {@code firstSequence} failed
     */
    void failed(int flow, int step, long firstSequence, int count);
}
