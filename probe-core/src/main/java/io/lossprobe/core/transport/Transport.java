package io.lossprobe.core.transport;

/**
 * A way of moving lossprobe messages between port-paired senders and receivers: raw UDP, TCP, Aeron.
 * Implementations live in their own modules, are found with {@link java.util.ServiceLoader}, and never depend
 * on each other. The run engine in probe-core does the pacing, accounting and reporting; a transport only moves
 * bytes and reports its own counters.
 */
public interface Transport {
    /** Short name used on the command line and in results: {@code udp}, {@code tcp}, {@code aeron}. */
    String name();

    /**
     * True when the transport promises delivery (TCP, reliable Aeron): any loss, duplicate or reorder it shows is
     * then a defect of the path or of the tool, and results say so loudly.
     */
    default boolean reliable() {
        return false;
    }

    /**
     * Binds one receiver per flow (port {@code basePort + i}) and starts delivering messages to
     * {@code spec.flows()[i]}. Returns once every port is bound.
     */
    ReceiverEndpoint openReceiver(ReceiverSpec spec) throws Exception;

    /** Opens one sender per flow towards {@code spec.targetHost()}, port {@code basePort + i}. */
    SenderEndpoint openSender(SenderSpec spec) throws Exception;
}
