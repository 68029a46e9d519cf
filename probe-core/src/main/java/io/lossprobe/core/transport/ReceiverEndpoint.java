package io.lossprobe.core.transport;

/** The receiving half of a transport: every flow's receiver, bound and delivering to its FlowReceiver. */
public interface ReceiverEndpoint extends StepEndpoint {
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
}
