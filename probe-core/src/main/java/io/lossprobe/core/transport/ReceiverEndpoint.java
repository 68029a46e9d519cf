package io.lossprobe.core.transport;

/** The receiving half of a transport: every flow's receiver, bound and delivering to its FlowReceiver. */
public interface ReceiverEndpoint extends StepEndpoint {
    /**
     * As {@link #beginStep(int)}, knowing the step's rate over all flows (each flow's share is
     * {@link io.lossprobe.core.plan.Plan#flowRate}), for a receiver that reads differently at different rates.
     */
    default void beginStep(int step, io.lossprobe.core.plan.Level level) throws Exception {
        beginStep(step);
    }

    /**
     * Runs {@code action.accept(i)} for every flow i on the thread that accounts flow i's messages, between two of
     * them, and waits until every flow's has run. Flows read by one thread run there in turn; flows read by
     * different threads run on each at once, so no thread waits for another's. The engine begins and closes each
     * flow's step accounting through this.
     */
    void onFlowThreads(java.util.function.IntConsumer action) throws Exception;

    /**
     * Sends {@code datagram} from flow {@code flow}'s own socket to {@code to}: a receiver's punch towards its
     * sender ({@link io.lossprobe.core.wire.Punch}), opening a NAT's way back in. Never during a step.
     */
    default void punch(int flow, java.net.InetSocketAddress to, byte[] datagram) throws Exception {
        throw new UnsupportedOperationException("these receivers send no punches");
    }

    /**
     * Stops (true) or resumes (false) reading from the network, leaving data to queue in the kernel or the
     * transport. For tests that stall a receiver.
     */
    void setPaused(boolean paused) throws Exception;
}
