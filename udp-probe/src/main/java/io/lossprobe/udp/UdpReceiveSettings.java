package io.lossprobe.udp;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SendPacing;
import io.lossprobe.core.transport.Timing;
import io.lossprobe.netty.NettyIo;
import io.netty.channel.Channel;
import io.netty.channel.socket.DatagramChannelConfig;
import java.util.HashMap;
import java.util.Map;

/**
 * The UDP receiver's settings, read from its options: its socket I/O ({@code udp.io}) and receive buffer, where
 * receive times come from ({@code udp.timestamps}), how many threads read ({@code udp.rxThreads}) and how they are
 * tuned, UDP_GRO's mode ({@code udp.gro}) and the step from which {@code auto} turns it on. {@link UdpReceiver}
 * opens its sockets and readers with them.
 *
 * @param gro      UDP_GRO on from the start
 * @param groAuto  {@code udp.gro=auto} with lossprobe's own readers (Netty's reads are set up for GRO or not when
 *                 the socket is made)
 * @param stamped  kernel receive timestamps, read by lossprobe's own threads ({@link StampedReader})
 * @param readIntervalNs how often those threads read when datagrams trickle in ({@code udp.readIntervalNs}): only
 *                 with kernel stamps, in the default timing and in stream mode (an echo reply leaves when its
 *                 request is read); 0: they wake for every datagram
 * @param echoWakeEarlyNs an echo responder's early wake-up ({@code udp.echoWakeEarlyNs}, {@link ArrivalForecast}):
 *                 only with kernel stamps, in the default timing and in echo mode; 0 for none
 */
record UdpReceiveSettings(NettyIo io, int messageSize, int rcvbuf, boolean gro, boolean groAuto, boolean precision,
                          boolean stamped, ThreadTuning tuning, int threads, long readIntervalNs,
                          long echoWakeEarlyNs) {
    /** The settings {@code spec}'s options ask for; refuses the ones that cannot work here. */
    static UdpReceiveSettings of(ReceiverSpec spec) {
        NettyIo io = NettyIo.choose(UdpOptions.IO.key(), UdpOptions.IO.read(spec.options()));
        int size = spec.plan().messageSize();
        int rcvbuf = UdpOptions.RCVBUF.read(spec.options());
        String groMode = groOption(io, UdpOptions.GRO.read(spec.options()));
        boolean precision = Timing.precision(spec.options());
        boolean stamped = kernelTimestamps(io, UdpOptions.TIMESTAMPS.read(spec.options()));
        ThreadTuning tuning = ThreadTuning.of(spec.options(), precision, 1);
        int threads = receiveThreads(spec.flows().length, UdpOptions.RX_THREADS.read(spec.options()), precision);
        long readInterval = stamped && !precision && !spec.plan().echo()
            ? UdpOptions.READ_INTERVAL_NS.read(spec.options()) : 0;
        long echoWakeEarly = stamped && !precision && spec.plan().echo()
            ? UdpOptions.ECHO_WAKE_EARLY_NS.read(spec.options()) : 0;
        return new UdpReceiveSettings(io, size, rcvbuf, groMode.equals("on"), groMode.equals("auto") && stamped,
            precision, stamped, tuning, threads, readInterval, echoWakeEarly);
    }

    /** What the receiver reports of its set-up, read once it is open and (in the precision mode) tuned. */
    Map<String, Long> environment(Channel first) {
        Map<String, Long> env = new HashMap<>();
        env.put(UdpEnvironment.RECEIVE_BUFFER_REQUESTED.key, (long) rcvbuf);
        env.put(UdpEnvironment.RECEIVE_BUFFER_GRANTED.key, (long) ((DatagramChannelConfig)
            first.config()).getReceiveBufferSize());
        env.put(io.environmentKey(), 1L);
        env.put(UdpEnvironment.RECEIVE_THREADS.key, (long) threads);
        env.put(UdpEnvironment.READ_INTERVAL_NS.key, readIntervalNs);
        if (echoWakeEarlyNs > 0) {
            env.put(UdpEnvironment.ECHO_WAKE_EARLY_NS.key, echoWakeEarlyNs);
        }
        if (gro) {
            env.put(UdpEnvironment.GRO.key, 1L);
        }
        if (groAuto) {
            env.put(UdpEnvironment.GRO_AUTO.key, 1L);
        }
        if (precision) {
            env.put(UdpEnvironment.TIMING_PRECISION.key, 1L);
            env.put(UdpEnvironment.RECEIVE_TIMER_SLACK_NS.key, tuning.timerSlackNs());
            env.put(UdpEnvironment.RECEIVE_PINNED_THREADS.key, (long) tuning.pinnedThreads());
            env.put(UdpEnvironment.RECEIVE_SLICE_NS.key, tuning.sliceNs());
            if (io == NettyIo.EPOLL) {
                Integer busyPoll = first.config().getOption(UdpReceiver.SO_BUSY_POLL); // read back: Netty only logs
                env.put(UdpEnvironment.RECEIVE_BUSY_POLL_US.key, busyPoll == null ? -1L : busyPoll);
            }
        }
        env.put(UdpEnvironment.KERNEL_TIMESTAMPS.key, stamped ? 1L : 0L);
        return env;
    }

    /**
     * Whether UDP_GRO pays at {@code level}: only a GSO send of several messages is coalesced, and the sender's
     * sends carry several once a flow's rate nears one message per send cycle ({@code udp.minCycleNs}, 50 us: 20k/s
     * a flow); from half of that, or at max. Never below 40k/s in all, where the sender keeps no minimum
     * cycle ({@link SendPacing#minCycleAt}) and each message leaves on its own.
     * Measured (docs/performance.md): 1M/s over 48 flows (20.8k/s a flow) kept its target in every run with it,
     * not in every run without.
     */
    static boolean groPays(int flows, Level level, long minCycleNs) {
        return level.isMax() || 2.0 * Plan.flowRate(level.ratePerSecond(), flows, 0)
            * SendPacing.minCycleAt(minCycleNs, level.ratePerSecond()) >= 1e9;
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
