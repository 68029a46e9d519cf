package io.lossprobe.udp;

import io.lossprobe.netty.NettyIo;

/**
 * The UDP receiver's settings, read from its options: where receive times come from ({@code udp.timestamps}), how
 * many threads read ({@code udp.rxThreads}), UDP_GRO's mode ({@code udp.gro}) and the step from which {@code auto}
 * turns it on. {@link UdpReceiver} opens its sockets and readers with them.
 */
final class UdpReceiveSettings {
    private UdpReceiveSettings() {
    }

    /**
     * Whether UDP_GRO pays at {@code level}: only a GSO send of several messages is coalesced, and the sender's
     * sends carry several once a flow's rate nears one message per send cycle ({@code udp.minCycleNs}, 50 us: 20k/s
     * a flow); from half of that, or at max. Measured (docs/performance.md): 1M/s over 48 flows (20.8k/s a flow)
     * kept its target in every run with it, not in every run without.
     */
    static boolean groPays(int flows, io.lossprobe.core.plan.Level level, long minCycleNs) {
        return level.isMax()
            || 2.0 * io.lossprobe.core.plan.Plan.flowRate(level.ratePerSecond(), flows, 0) * minCycleNs >= 1e9;
    }

    /**
     * {@code udp.timestamps}: {@code kernel} takes receive times from the kernel (SO_TIMESTAMPNS, read by
     * lossprobe's native piece; refused where that cannot work), {@code user} from the receiving thread's clock,
     * {@code auto} (default) the kernel's wherever it works (native epoll, the native piece loaded; with UDP_GRO too,
     * each coalesced datagram taking its read's one stamp), else the
     * user's. In both timing modes: lossprobe's own reader ({@link StampedReader}) also answers echo requests with
     * one sendto each and allocates nothing per datagram; measured on this 2-core VM under load, echo at 1k/s had a
     * round trip p50 of 53 us with it against 90-100 us through Netty's reads, and 48 flows at max delivered
     * 550-570k msgs/s against 140-260k.
     */
    static boolean kernelTimestamps(NettyIo io, String option) {
        String o = option.toLowerCase(java.util.Locale.ROOT);
        String whyNot = io != NettyIo.EPOLL ? "needs native epoll (udp.io=epoll)"
            : NativeUdp.available() ? null : NativeUdp.unavailableBecause();
        return switch (o) {
            case "kernel" -> {
                if (whyNot != null) {
                    throw new IllegalStateException("udp.timestamps=kernel: " + whyNot);
                }
                yield true;
            }
            case "user" -> false;
            case "auto" -> whyNot == null;
            default -> throw new IllegalArgumentException("udp.timestamps must be auto, kernel or user, not '"
                + option + "'");
        };
    }

    /**
     * {@code udp.rxThreads}: receiving threads, flows spread over them; {@code auto} is half the cores, at least
     * two (in the precision mode, where each spins: half of the cores the sender leaves, at least one). Measured on
     * 2 cores (the dated runs in docs/benchmarks/): with one receiving thread a sender at full speed takes a core and
     * overruns it; with two the scheduler shares the cores three ways, and 48 flows delivered about 1.2x more at the
     * max level, with almost no socket drops.
     */
    static int receiveThreads(int flows, String option, boolean precision) {
        int cores = Runtime.getRuntime().availableProcessors();
        // In the precision mode every receiving thread spins: with the sending thread, they must fit the cores,
        // so auto leaves at least half of the rest free (one thread on two cores).
        int auto = precision ? Math.max(1, (cores - 1) / 2) : Math.max(2, cores / 2);
        int wanted = option.equalsIgnoreCase("auto") ? auto : Integer.parseInt(option);
        if (wanted < 1) {
            throw new IllegalArgumentException("udp.rxThreads must be auto or at least 1, not '" + option + "'");
        }
        return Math.min(flows, wanted);
    }

    /** {@code udp.gro}: {@code auto} (default), {@code on} or {@code off} ({@code true}/{@code false} too); on needs
     * native epoll. */
    static String groOption(NettyIo io, String option) {
        String o = switch (option.toLowerCase(java.util.Locale.ROOT)) {
            case "on", "true" -> "on";
            case "off", "false" -> "off";
            case "auto" -> "auto";
            default -> throw new IllegalArgumentException("udp.gro must be auto, on or off, not '" + option + "'");
        };
        if (o.equals("on") && io != NettyIo.EPOLL) {
            throw new IllegalStateException("udp.gro needs native epoll");
        }
        return o;
    }
}
