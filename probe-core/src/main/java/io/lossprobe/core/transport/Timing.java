package io.lossprobe.core.transport;

import java.util.Map;

/**
 * How a transport's measured threads wait, and where receive times come from: the run's timing mode
 * ({@code --timing}, the transport option {@value #KEY}) and the names results use for it.
 *
 * <ul>
 *   <li>{@value #DEFAULT}: threads sleep between events (epoll, timers); modest CPU, a floor of tens of
 *       microseconds from wake-ups;</li>
 *   <li>{@value #PRECISION}: the send loop spins the last stretch to each intended time (all the time at a few
 *       thousand messages/s and more) and the receiving threads busy-poll their sockets, each taking a core while a
 *       step runs; where the platform allows, the kernel stamps arrivals.</li>
 * </ul>
 *
 * A transport that honours the mode declares {@link #OPTION} among its options; one that does not always runs
 * {@value #DEFAULT}, and its results say so.
 */
public final class Timing {
    public static final String KEY = "timing";
    public static final String DEFAULT = "default";
    public static final String PRECISION = "precision";

    /** Receive times taken by the kernel as the datagram was queued (SO_TIMESTAMPNS). */
    public static final String SOURCE_KERNEL = "kernel";
    /** Receive times read by lossprobe's receiving thread after the read returned. */
    public static final String SOURCE_USER = "user";
    /** Some arrivals of the figure were stamped by the kernel, some by the receiving thread. */
    public static final String SOURCE_MIXED = "mixed";

    /** The option, declared by every transport that honours it. */
    public static final TransportOption<String> OPTION = TransportOption.choice(KEY, DEFAULT,
        "default: threads sleep between events (modest CPU); precision: the send loop spins the last stretch to each "
            + "intended time "
            + "and receiving threads busy-poll (a core each while a step runs), with kernel receive timestamps "
            + "where available", DEFAULT, PRECISION).withSystemProperty();

    private Timing() {
    }

    /** The mode {@code transport} runs in under {@code options}: {@value #DEFAULT} unless it declares the option. */
    public static String modeOf(Transport transport, Map<String, String> options) {
        for (TransportOption<?> o : transport.options()) {
            if (o.key().equals(KEY)) {
                return OPTION.read(options);
            }
        }
        return DEFAULT;
    }

    /** True for the precision mode under {@code options} (for a transport that declares the option). */
    public static boolean precision(Map<String, String> options) {
        return PRECISION.equals(OPTION.read(options));
    }

    /**
     * The source of a figure of {@code count} arrivals, {@code kernelStamped} of them stamped by the kernel; null
     * for an empty figure.
     */
    public static String sourceOf(long kernelStamped, long count) {
        if (count == 0) {
            return null;
        }
        if (kernelStamped == 0) {
            return SOURCE_USER;
        }
        return kernelStamped >= count ? SOURCE_KERNEL : SOURCE_MIXED;
    }
}
