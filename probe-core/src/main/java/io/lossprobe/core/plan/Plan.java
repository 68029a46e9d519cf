package io.lossprobe.core.plan;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * What a run does: which transports, on which ports, through which levels, for how long, with what messages.
 * Flow {@code i} uses port {@code basePort + i}. Every check a user can trip is made here, with a message fit
 * for the command line.
 *
 * @param transports     transport names, in the order they run ({@code udp}, {@code tcp}, {@code aeron})
 * @param ports          number of flows (port pairs)
 * @param basePort       first port; flow i is basePort + i
 * @param levels         the steps' target rates, in order
 * @param durationNs     measured window per step
 * @param warmupNs       warm-up before each window (sent, not counted)
 * @param drainNs        Tmax: how long after the window the receiver waits for stragglers
 * @param messageSize    bytes per message including the 48-byte header
 * @param bindAddress    the receivers' address (and the senders' target in the embedded run)
 * @param mode           {@code stream} (one way) or {@code echo} (the receiver sends every message back)
 * @param concurrency    echo mode only: 0 for open loop (requests on the schedule whatever the replies do), else
 *                       the most requests outstanding per flow (closed loop)
 * @param transportOptions the transport options in effect ({@code -X key=value}, and {@code udp.io}, {@code rcvbuf},
 *                       {@code sndbuf} from their own flags), sorted by key; a record of what the run used (the
 *                       engine takes its options separately, and a control server never takes them from here)
 * @param sizes          the message sizes the run steps through, each a pass of the levels (and search) per
 *                       transport; {@code messageSize} is the first ({@code --sizes}; absent in older files: just
 *                       {@code messageSize})
 * @param search         the rate search to run per transport and size, or null ({@code --search})
 * @param intervalNs     every step also counted per interval of this length (0: not; {@code --interval})
 * @param dscp           the traffic classes ({@code --dscp}, DSCP 0-63) spread over the flows: flow {@code i} is
 *                       marked {@code dscp[i mod n]} on every data socket, both directions; empty: not set (the
 *                       host's default, usually CS0; absent in older files)
 * @param pattern        how each step spreads its messages over time ({@code --pattern}, {@link SendPattern}, in
 *                       its canonical text); the level stays the average rate and the count is the constant
 *                       pattern's ({@code constant}: absent in older files)
 * @param seed           what a random pattern ({@code poisson}) draws from ({@code --seed}); the schedule of every
 *                       flow, step and phase follows from it (0 in older files)
 * @param sizeMix        the sizes every step's messages mix ({@code --size-mix}, {@link SizeMix}, in its canonical
 *                       text), {@code messageSize} being the largest; null: every message is {@code messageSize}
 *                       (absent in older files)
 */
public record Plan(List<String> transports, int ports, int basePort, List<Level> levels, long durationNs,
                   long warmupNs, long drainNs, int messageSize, String bindAddress, String mode, int concurrency,
                   Map<String, String> transportOptions, List<Integer> sizes, SearchPlan search, long intervalNs,
                   List<Integer> dscp, String pattern, long seed, String sizeMix) {
    public static final String STREAM = "stream";
    public static final String ECHO = "echo";
    public static final int MAX_CONCURRENCY = 65_536;
    /** Steps are numbered in the header's 16-bit step field ({@code MessageHeader.step}): 0 to 65,535. */
    public static final int MAX_LEVELS = 1 << 16;
    /** The longest warm-up, window or drain. */
    public static final long MAX_PHASE_NS = TimeUnit.HOURS.toNanos(24);

    /** A plan of one message size (no mix). */
    public Plan(List<String> transports, int ports, int basePort, List<Level> levels, long durationNs,
                long warmupNs, long drainNs, int messageSize, String bindAddress, String mode, int concurrency,
                Map<String, String> transportOptions, List<Integer> sizes, SearchPlan search, long intervalNs,
                List<Integer> dscp, String pattern, long seed) {
        this(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, messageSize, bindAddress, mode,
            concurrency, transportOptions, sizes, search, intervalNs, dscp, pattern, seed, null);
    }

    /** A plan of the constant pattern. */
    public Plan(List<String> transports, int ports, int basePort, List<Level> levels, long durationNs,
                long warmupNs, long drainNs, int messageSize, String bindAddress, String mode, int concurrency,
                Map<String, String> transportOptions, List<Integer> sizes, SearchPlan search, long intervalNs,
                List<Integer> dscp) {
        this(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, messageSize, bindAddress, mode,
            concurrency, transportOptions, sizes, search, intervalNs, dscp, null, 0);
    }

    /** A plan without traffic classes. */
    public Plan(List<String> transports, int ports, int basePort, List<Level> levels, long durationNs,
                long warmupNs, long drainNs, int messageSize, String bindAddress, String mode, int concurrency,
                Map<String, String> transportOptions, List<Integer> sizes, SearchPlan search, long intervalNs) {
        this(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, messageSize, bindAddress, mode,
            concurrency, transportOptions, sizes, search, intervalNs, List.of());
    }

    /** A plan of one message size, no search and no intervals (the shape of every plan before they existed). */
    public Plan(List<String> transports, int ports, int basePort, List<Level> levels, long durationNs,
                long warmupNs, long drainNs, int messageSize, String bindAddress, String mode, int concurrency,
                Map<String, String> transportOptions) {
        this(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, messageSize, bindAddress, mode,
            concurrency, transportOptions, null, null, 0);
    }

    /** A one-way (stream) plan. */
    public Plan(List<String> transports, int ports, int basePort, List<Level> levels, long durationNs,
                long warmupNs, long drainNs, int messageSize, String bindAddress) {
        this(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, messageSize, bindAddress, STREAM, 0);
    }

    /** A plan with no transport options recorded. */
    public Plan(List<String> transports, int ports, int basePort, List<Level> levels, long durationNs,
                long warmupNs, long drainNs, int messageSize, String bindAddress, String mode, int concurrency) {
        this(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, messageSize, bindAddress, mode,
            concurrency, Map.of());
    }

    public static final int DEFAULT_PORTS = 48;
    public static final int DEFAULT_BASE_PORT = 40000;
    public static final int MAX_UDP_PAYLOAD = 65507;
    /** The shortest interval {@code --interval} takes. */
    public static final long MIN_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(10);
    /** The most intervals one step may be cut into. */
    public static final int MAX_INTERVALS = 100_000;

    public Plan {
        mode = mode == null ? STREAM : mode;
        if (!mode.equals(STREAM) && !mode.equals(ECHO)) {
            throw new IllegalArgumentException("--mode must be stream or echo, not '" + mode + "'");
        }
        if (concurrency < 0 || concurrency > MAX_CONCURRENCY) {
            throw new IllegalArgumentException("--concurrency must be between 1 and " + MAX_CONCURRENCY);
        }
        if (concurrency > 0 && !mode.equals(ECHO)) {
            throw new IllegalArgumentException("--concurrency goes with --mode echo");
        }
        transports = List.copyOf(transports);
        levels = List.copyOf(levels == null ? List.of() : levels);
        transportOptions = sortedOptions(transportOptions);
        dscp = dscp == null ? List.of() : List.copyOf(dscp);
        for (Integer d : dscp) {
            if (d == null || d < 0 || d > Dscp.MAX) {
                throw new IllegalArgumentException("--dscp " + d + " is not a DSCP (0 to 63)");
            }
        }
        SendPattern sendPattern = SendPattern.parse(pattern);
        pattern = sendPattern.toString();
        String sizeOption = sizes == null || sizes.isEmpty() ? "--size" : "--sizes";
        sizes = sizes == null || sizes.isEmpty() ? List.of(messageSize) : List.copyOf(sizes);
        if (transports.isEmpty()) {
            throw new IllegalArgumentException("no transport chosen");
        }
        if (ports < 1) {
            throw new IllegalArgumentException("--ports must be at least 1, got " + ports);
        }
        if (basePort < 1 || basePort > 65535) {
            throw new IllegalArgumentException("--base-port must be between 1 and 65535, got " + basePort);
        }
        if ((long) basePort + ports - 1 > 65535) {
            throw new IllegalArgumentException("--ports " + ports + " from --base-port " + basePort
                + " runs past port 65535");
        }
        if (levels.isEmpty() && search == null) {
            throw new IllegalArgumentException("--levels is empty");
        }
        if (levels.size() > MAX_LEVELS) {
            throw new IllegalArgumentException("--levels has " + levels.size() + " levels; at most " + MAX_LEVELS
                + " fit the message header's 16-bit step number");
        }
        if ((long) stepsPerSize(levels, search) * sizes.size() > MAX_LEVELS) {
            throw new IllegalArgumentException(sizes.size() + " sizes x " + stepsPerSize(levels, search)
                + " steps each make more than the " + MAX_LEVELS + " steps the message header's 16-bit step number "
                + "can tell apart");
        }
        if (durationNs <= 0) {
            throw new IllegalArgumentException("--duration must be greater than 0");
        }
        if (durationNs > MAX_PHASE_NS) {
            throw new IllegalArgumentException("--duration must be at most 24h");
        }
        if (warmupNs < 0 || drainNs < 0) {
            throw new IllegalArgumentException("--warmup and --drain must not be negative");
        }
        // Bounded so that no deadline (start + warm-up + window + drain) can overflow.
        if (warmupNs > MAX_PHASE_NS) {
            throw new IllegalArgumentException("--warmup must be at most 24h");
        }
        if (drainNs > MAX_PHASE_NS) {
            throw new IllegalArgumentException("--drain must be at most 24h");
        }
        for (Integer size : sizes) {
            checkSize(size == null ? 0 : size, sizeOption);
        }
        if (sizes.get(0) != messageSize) {
            throw new IllegalArgumentException("the message size " + messageSize + " is not the first of --sizes "
                + sizes);
        }
        if (sizes.stream().distinct().count() != sizes.size()) {
            throw new IllegalArgumentException("--sizes names a size twice: " + sizes);
        }
        if (search != null) {
            if (search.shortTrialNs() > durationNs) {
                throw new IllegalArgumentException("--search-trial must not be longer than --duration");
            }
            if (search.minRate() < ports) {
                throw new IllegalArgumentException("--search-min " + search.minRate() + " is below one message per "
                    + "second per port (" + ports + " ports)");
            }
        }
        if (intervalNs < 0) {
            throw new IllegalArgumentException("--interval must be greater than 0");
        }
        if (intervalNs > 0) {
            if (intervalNs < MIN_INTERVAL_NS) {
                throw new IllegalArgumentException("--interval must be at least 10ms");
            }
            if (intervalNs > durationNs) {
                throw new IllegalArgumentException("--interval must not be longer than --duration");
            }
            if (intervals(durationNs, intervalNs) > MAX_INTERVALS) {
                throw new IllegalArgumentException("--interval cuts each window into more than " + MAX_INTERVALS
                    + " intervals; choose a longer one");
            }
        }
        for (Level level : levels) {
            if (!level.isMax() && level.ratePerSecond() < ports) {
                // Each flow must send at least one message per second or some flows would be silent.
                throw new IllegalArgumentException("level " + level + " is below one message per second per port ("
                    + ports + " ports)");
            }
            checkPattern(sendPattern, level, ports);
        }
        SizeMix mix = SizeMix.parse(sizeMix);
        sizeMix = mix == null ? null : mix.toString();
        if (mix != null) {
            if (sizes.size() > 1) {
                throw new IllegalArgumentException("--size-mix does not go with --sizes: a mix is one pass, each "
                    + "message of its own size");
            }
            if (messageSize != mix.largest()) {
                throw new IllegalArgumentException("the message size " + messageSize + " is not the largest of "
                    + "--size-mix " + mix);
            }
            if (mode.equals(ECHO)) {
                throw new IllegalArgumentException("--size-mix does not go with --mode echo yet");
            }
        }
        if (search != null && sendPattern.intervalNs() > 0) {
            throw new IllegalArgumentException("--pattern " + sendPattern + " has a rate of its own and --search "
                + "picks rates; use burst:" + sendPattern.burst() + " (the rate sets the interval)");
        }
    }

    /** Every flow of {@code level} can be paced by {@code pattern} (a burst:N/INTERVAL is N per INTERVAL). */
    private static void checkPattern(SendPattern pattern, Level level, int ports) {
        long total = level.isMax() ? 0 : level.ratePerSecond();
        for (int flow = 0; flow < Math.min(ports, 2); flow++) {
            // Flows get the share or the share + 1: flow 0 has the larger, the last flow the smaller.
            String refusal = pattern.refusal(flowRate(total, ports, flow == 0 ? 0 : ports - 1));
            if (refusal != null) {
                throw new IllegalArgumentException(refusal + " (level " + level + " over " + ports + " ports)");
            }
        }
    }

    private static void checkSize(int size, String option) {
        if (size < io.lossprobe.core.wire.MessageHeader.LENGTH) {
            throw new IllegalArgumentException(option + " " + size + " is below the "
                + io.lossprobe.core.wire.MessageHeader.LENGTH + "-byte header");
        }
        if (size > MAX_UDP_PAYLOAD) {
            throw new IllegalArgumentException(option + " " + size + " is above the largest UDP payload ("
                + MAX_UDP_PAYLOAD + ")");
        }
    }

    private static int stepsPerSize(List<Level> levels, SearchPlan search) {
        return levels.size() + (search == null ? 0 : search.steps());
    }

    /** Steps one transport takes at most for one message size: the levels, then the search's trials and steps. */
    public int stepsPerSize() {
        return stepsPerSize(levels, search);
    }

    /** Steps one transport takes at most over all sizes; steps are numbered 0 to this - 1 per transport. */
    public int stepsPerTransport() {
        return stepsPerSize() * sizes.size();
    }

    /** The intervals a window of {@code windowNs} is cut into (0 without {@code --interval}). */
    public int intervals(long windowNs) {
        return intervals(windowNs, intervalNs);
    }

    private static int intervals(long windowNs, long intervalNs) {
        if (intervalNs <= 0) {
            return 0;
        }
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (windowNs + intervalNs - 1) / intervalNs));
    }

    public boolean echo() {
        return ECHO.equals(mode);
    }

    /**
     * The same plan for one pass of the run: message size {@code size} (one of {@link #sizes}), which the transports
     * open their sockets and framing for.
     */
    public Plan forSize(int size) {
        if (!sizes.contains(size)) {
            throw new IllegalArgumentException("size " + size + " is not one of the plan's " + sizes);
        }
        List<Integer> ordered = new java.util.ArrayList<>(List.of(size));
        sizes.stream().filter(s -> s != size).forEach(ordered::add);
        return new Plan(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, size, bindAddress, mode,
            concurrency, transportOptions, ordered, search, intervalNs, dscp, pattern, seed, sizeMix);
    }

    /** The same plan with another receivers' address. */
    public Plan withBindAddress(String address) {
        return new Plan(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, messageSize, address,
            mode, concurrency, transportOptions, sizes, search, intervalNs, dscp, pattern, seed, sizeMix);
    }

    /** The same plan with another warm-up ({@code 0}: the counters are sampled before the first message). */
    public Plan withWarmup(long newWarmupNs) {
        return new Plan(transports, ports, basePort, levels, durationNs, newWarmupNs, drainNs, messageSize,
            bindAddress, mode, concurrency, transportOptions, sizes, search, intervalNs, dscp, pattern, seed, sizeMix);
    }

    /** The same plan with another search (a controller fills in the server's rate limit for a search to max). */
    public Plan withSearch(SearchPlan newSearch) {
        return new Plan(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, messageSize,
            bindAddress, mode, concurrency, transportOptions, sizes, newSearch, intervalNs, dscp, pattern, seed,
            sizeMix);
    }

    /** The same plan with other transport options recorded. */
    public Plan withTransportOptions(Map<String, String> options) {
        return new Plan(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, messageSize,
            bindAddress, mode, concurrency, options, sizes, search, intervalNs, dscp, pattern, seed, sizeMix);
    }

    /** Sorted and unmodifiable; null (a file written before the field existed) becomes empty. */
    private static Map<String, String> sortedOptions(Map<String, String> options) {
        if (options == null || options.isEmpty()) {
            return Map.of();
        }
        Map<String, String> sorted = new TreeMap<>();
        options.forEach((key, value) -> {
            if (key == null || value == null) {
                throw new IllegalArgumentException("transport option '" + key + "' has no value");
            }
            sorted.put(key, value);
        });
        return Collections.unmodifiableMap(sorted);
    }

    /** The same plan on the ports from {@code port} ({@code run --bidir}: the reverse direction's). */
    public Plan withBasePort(int port) {
        return new Plan(transports, ports, port, levels, durationNs, warmupNs, drainNs, messageSize,
            bindAddress, mode, concurrency, transportOptions, sizes, search, intervalNs, dscp, pattern, seed, sizeMix);
    }

    /**
     * The plan of a {@code --probe echo} flow beside this plan's steps: one echo flow at {@code rate} on the port
     * after this plan's, one step for each of this plan's steps per transport, at {@code size} bytes, with the same
     * transports, timing, receivers' address and options, and nothing else (no search, sizes, intervals, classes or
     * pattern).
     */
    public Plan probeOf(long rate, int size) {
        List<Level> probeLevels = java.util.Collections.nCopies(stepsPerTransport(), Level.of(rate));
        return new Plan(transports, 1, basePort + ports, probeLevels, durationNs, warmupNs, drainNs, size,
            bindAddress, ECHO, 0, transportOptions, List.of(size), null, 0, List.of(), null, 0);
    }

    /** The same plan with other traffic classes ({@code --dscp}; empty: none). */
    public Plan withDscp(List<Integer> classes) {
        return new Plan(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, messageSize,
            bindAddress, mode, concurrency, transportOptions, sizes, search, intervalNs, classes, pattern, seed,
            sizeMix);
    }

    /**
     * The same plan with a size mix ({@code --size-mix}, its text): one pass whose message size is the mix's largest.
     * Null: none, the message size unchanged.
     */
    public Plan withSizeMix(String mix) {
        SizeMix parsed = SizeMix.parse(mix);
        int size = parsed == null ? messageSize : parsed.largest();
        return new Plan(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, size, bindAddress, mode,
            concurrency, transportOptions, parsed == null ? sizes : List.of(size), search, intervalNs, dscp, pattern,
            seed, mix);
    }

    /** The same plan with another send pattern ({@code --pattern}, its text) and seed ({@code --seed}). */
    public Plan withPattern(String newPattern, long newSeed) {
        return new Plan(transports, ports, basePort, levels, durationNs, warmupNs, drainNs, messageSize,
            bindAddress, mode, concurrency, transportOptions, sizes, search, intervalNs, dscp, newPattern, newSeed,
            sizeMix);
    }

    /** The sizes each step's messages mix, or null when every message is {@link #messageSize}. */
    public SizeMix mix() {
        return SizeMix.parse(sizeMix);
    }

    /** Every length a message of this plan's pass may have: its size mix's sizes, or just {@link #messageSize}. */
    public int[] messageLengths() {
        SizeMix m = mix();
        return m == null ? new int[] {messageSize} : m.sizes().stream().mapToInt(Integer::intValue).toArray();
    }

    /** How each step spreads its messages over time. */
    public SendPattern sendPattern() {
        return SendPattern.parse(pattern);
    }

    /** The DSCP flow {@code flow} is marked with ({@code dscp[flow mod n]}), or -1 when the plan sets none. */
    public int dscpOf(int flow) {
        return dscp.isEmpty() ? -1 : dscp.get(flow % dscp.size());
    }

    /** The TOS / traffic-class byte of flow {@code flow}'s sockets, or -1 when the plan sets none. */
    public int tosOf(int flow) {
        int d = dscpOf(flow);
        return d < 0 ? -1 : Dscp.tos(d);
    }

    public int port(int flow) {
        return basePort + flow;
    }

    /** Messages per second for one flow: the remainder is spread, so the flows add up to the level exactly. */
    public long flowRate(Level level, int flow) {
        return flowRate(level.ratePerSecond(), ports, flow);
    }

    public static long flowRate(long total, int flows, int flow) {
        long share = total / flows;
        return flow < total % flows ? share + 1 : share;
    }
}
