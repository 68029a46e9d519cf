package io.lossprobe.core.transport;

/**
 * A way of moving lossprobe messages between port-paired senders and receivers: raw UDP, TCP, Aeron.
 * Implementations live in their own modules, are found with {@link java.util.ServiceLoader}, and never depend
 * on each other. The run engine in probe-core does the pacing, accounting and reporting; a transport only moves
 * bytes and reports its own counters.
 *
 * <p>An instance serves one run at a time: it may share what it opened between that run's receiver and sender (Aeron
 * shares one media driver), so a server gives every session instances of its own. Everything it reads from the
 * run's options is declared in {@link #options()}.
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

    /** {@link #reliable()} under the run's {@code options} (Aeron is reliable unless told otherwise). */
    default boolean reliable(java.util.Map<String, String> options) {
        return reliable();
    }

    /**
     * Every option this transport reads from the run's options, declared once: validated before any traffic,
     * forwarded to a server when it applies there, and read through the declaration.
     */
    default java.util.List<TransportOption<?>> options() {
        return java.util.List.of();
    }

    /**
     * Refuses, with {@link IllegalArgumentException} and one line, {@code options} that are valid one by one but
     * not together (e.g. a setting that needs another); called before any traffic for each transport of a run.
     */
    default void checkOptions(java.util.Map<String, String> options) {
    }

    /**
     * Every counter this transport reports in its {@link TransportReport}s (step totals and per flow), declared
     * once: written into the results, and how reports find retransmits, NAKs and drops. A key reported but not
     * declared is a defect (each transport's tests check its declarations against a real run).
     */
    default java.util.List<CounterDescriptor> counters() {
        return java.util.List.of();
    }

    /**
     * Memory a run of {@code plan} makes this transport map or allocate on one host beyond the kernel's socket
     * buffers (Aeron's term buffers), so a server can refuse a plan that would exhaust it; 0 when negligible.
     */
    default long memoryBytes(io.lossprobe.core.plan.Plan plan, java.util.Map<String, String> options) {
        return 0;
    }

    /**
     * Warnings only the two sides' reports together can give (each side sees its own driver, stack or socket):
     * e.g. repair requests the sender received that the receiver never sent. None by default.
     */
    default java.util.List<String> stepWarnings(TransportReport sender, TransportReport receiver) {
        return java.util.List.of();
    }

    /**
     * Binds one receiver per flow (port {@code basePort + i}) and starts delivering messages to
     * {@code spec.flows()[i]}. Returns once every port is bound.
     */
    ReceiverEndpoint openReceiver(ReceiverSpec spec) throws Exception;

    /**
     * The longest {@link #openSender} may wait under {@code options} for something outside this process before it
     * returns or fails (Aeron: its subscribers to connect; TCP: a connect), 0 when it waits for nothing. A controller
     * waits that long beyond its own control timeout for a server to open its senders, so the server's reason for a
     * failure reaches it, not a timeout of its own.
     */
    default long senderOpenTimeoutMs(io.lossprobe.core.plan.Plan plan, java.util.Map<String, String> options) {
        return 0;
    }

    /** Opens one sender per flow towards {@code spec.targetHost()}, port {@code basePort + i}. */
    SenderEndpoint openSender(SenderSpec spec) throws Exception;
}
