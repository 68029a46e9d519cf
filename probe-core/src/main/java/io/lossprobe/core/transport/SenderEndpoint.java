package io.lossprobe.core.transport;

import java.util.concurrent.ScheduledExecutorService;

/**
 * The sending half of a transport: one writer per flow and the single thread the engine's send driver runs the
 * send loop on. The transport only moves bytes; pacing is the engine's.
 */
public interface SenderEndpoint extends StepEndpoint {
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

    /**
     * With {@link SenderSpec#punched}: the local port each flow's data leaves from, where its receiver's punch must
     * arrive (one for every flow when one socket sends them all); empty when this transport cannot wait for punches
     * (it then sends to the target on the plan's ports, as without {@code punched}).
     */
    default int[] sourcePorts() {
        return new int[0];
    }

    /**
     * With {@link SenderSpec#punched}: waits up to {@code timeoutNs} for the punches of the flows that have none yet
     * ({@link io.lossprobe.core.wire.Punch} under the spec's key), each on its flow's socket and from the target's
     * address; a flow's first punch that verifies sets where its data goes. Returns the flows still without one.
     * Called on the engine's thread before any step, never while sending.
     */
    default int[] awaitPunches(long timeoutNs) throws Exception {
        throw new UnsupportedOperationException("these senders take no punches");
    }

    /** The writer for flow {@code flow}; called once per step before the step's sending starts. */
    MessageWriter writer(int flow);

    /**
     * The single-threaded executor the send loop runs on, which is also the thread that completes this
     * transport's writes (a Netty event loop, or a thread of the transport's own). The driver queues one task per
     * send cycle; nothing else of the engine's runs there.
     */
    ScheduledExecutorService sendExecutor();

    /** How this transport wants its send loop paced. */
    default SendPacing pacing() {
        return SendPacing.DEFAULT;
    }

    /**
     * Echo mode: runs {@code action} on the thread that feeds replies to {@link SenderSpec#replies()}, with no
     * reply being accounted meanwhile, and waits for it.
     */
    default void onReplyThread(Runnable action) throws Exception {
        throw new UnsupportedOperationException("this transport has no echo mode");
    }
}
