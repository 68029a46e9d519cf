package io.lossprobe.control;

import io.lossprobe.core.accounting.SequenceTracker;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.plan.Units;
import io.lossprobe.core.transport.Transport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What a {@code lossprobe serve} accepts, before and after authentication. The defaults are safe for a shared
 * network: a controller can ask for a modest sweep, not a flood, not for ports below 1024, and not for more memory
 * than the host can spare; a stranger can hold a few unauthenticated connections for a few seconds, never a
 * session.
 *
 * @param maxRatePerSecond   highest level accepted (messages/s over all flows); {@code max} levels are refused
 * @param maxPorts           most flows per session
 * @param maxDurationNs      longest step window (and warm-up, and drain)
 * @param maxSessions        concurrent authenticated controllers
 * @param minPort            lowest data port
 * @param handshakeTimeoutMs the whole handshake, from accepting the connection to the controller's proof
 * @param idleTimeoutMs      longest wait for a controller's next command
 * @param maxLevels          most levels in a plan
 * @param maxTotalDurationNs longest run: transports x levels x (warm-up + window + drain)
 * @param maxBytesPerSecond  highest level times the message size
 * @param maxMemoryBytes     what one session may make this host allocate: the receivers' sequence windows of its
 *                           largest step plus what its largest transport maps (Aeron's term buffers)
 * @param preAuthPerAddress  unauthenticated connections held at once from one address; a further one closes that
 *                           address's oldest
 * @param preAuthTotal       unauthenticated connections held at once; a further one closes the oldest
 * @param writeTimeoutMs     longest a control write may block (a controller that never reads is closed)
 */
public record ServerLimits(long maxRatePerSecond, int maxPorts, long maxDurationNs, int maxSessions, int minPort,
                           int handshakeTimeoutMs, int idleTimeoutMs, int maxLevels, long maxTotalDurationNs,
                           long maxBytesPerSecond, long maxMemoryBytes, int preAuthPerAddress, int preAuthTotal,
                           int writeTimeoutMs) {
    /** The most intervals one step may be cut into between hosts (each travels back as a histogram). */
    static final int MAX_INTERVALS = 10_000;

    // The defaults a user can change, as lossprobe serve's --max-* options spell them: compile-time constants, so
    // those options' annotations name them and DEFAULTS below is built from the same text.
    public static final String DEFAULT_RATE = "2M";
    public static final int DEFAULT_PORTS = 256;
    public static final String DEFAULT_DURATION = "5m";
    public static final int DEFAULT_SESSIONS = 4;
    public static final int DEFAULT_LEVELS = 256;
    public static final String DEFAULT_TOTAL_DURATION = "1h";
    public static final String DEFAULT_BYTES_PER_SECOND = "256MiB";
    public static final String DEFAULT_MEMORY = "1024MiB";
    public static final int DEFAULT_PRE_AUTH_TOTAL = 32;
    public static final int DEFAULT_PRE_AUTH_PER_ADDRESS = 4;

    public static final ServerLimits DEFAULTS = new ServerLimits(Level.parse(DEFAULT_RATE).ratePerSecond(),
        DEFAULT_PORTS, Units.parseDurationNs(DEFAULT_DURATION, "max duration"), DEFAULT_SESSIONS, 1024, 5_000, 30_000,
        DEFAULT_LEVELS, Units.parseDurationNs(DEFAULT_TOTAL_DURATION, "max total duration"),
        Units.parseBytes(DEFAULT_BYTES_PER_SECOND, "max bytes rate"), Units.parseBytes(DEFAULT_MEMORY, "max memory"),
        DEFAULT_PRE_AUTH_PER_ADDRESS, DEFAULT_PRE_AUTH_TOTAL, 10_000);

    public ServerLimits {
        if (maxSessions < 1 || maxPorts < 1 || maxLevels < 1 || preAuthPerAddress < 1 || preAuthTotal < 1) {
            throw new IllegalArgumentException("session, port, level and connection limits must be at least 1");
        }
        if (handshakeTimeoutMs < 1 || idleTimeoutMs < 1 || writeTimeoutMs < 1) {
            throw new IllegalArgumentException("timeouts must be at least 1 ms");
        }
    }

    public ServerLimits withSessions(int sessions) {
        return new ServerLimits(maxRatePerSecond, maxPorts, maxDurationNs, sessions, minPort, handshakeTimeoutMs,
            idleTimeoutMs, maxLevels, maxTotalDurationNs, maxBytesPerSecond, maxMemoryBytes, preAuthPerAddress,
            preAuthTotal, writeTimeoutMs);
    }

    public ServerLimits withTimeouts(int handshakeMs, int idleMs, int writeMs) {
        return new ServerLimits(maxRatePerSecond, maxPorts, maxDurationNs, maxSessions, minPort, handshakeMs, idleMs,
            maxLevels, maxTotalDurationNs, maxBytesPerSecond, maxMemoryBytes, preAuthPerAddress, preAuthTotal,
            writeMs);
    }

    public ServerLimits withPreAuth(int perAddress, int total) {
        return new ServerLimits(maxRatePerSecond, maxPorts, maxDurationNs, maxSessions, minPort, handshakeTimeoutMs,
            idleTimeoutMs, maxLevels, maxTotalDurationNs, maxBytesPerSecond, maxMemoryBytes, perAddress, total,
            writeTimeoutMs);
    }

    /** The plan-size limits: rate, ports, step duration, levels, run duration, bytes/s and memory per session. */
    public ServerLimits withPlanLimits(long ratePerSecond, int ports, long durationNs, int levels, long totalNs,
                                       long bytesPerSecond, long memoryBytes) {
        return new ServerLimits(ratePerSecond, ports, durationNs, maxSessions, minPort, handshakeTimeoutMs,
            idleTimeoutMs, levels, totalNs, bytesPerSecond, memoryBytes, preAuthPerAddress, preAuthTotal,
            writeTimeoutMs);
    }

    /**
     * Null when the plan is acceptable, else the reason, fit to send back. {@code transports} are the plan's (for
     * the memory they map under {@code options}).
     */
    public String refuse(Plan plan, Map<String, Transport> transports, Map<String, String> options) {
        String shape = refuseShape(plan);
        if (shape != null) {
            return shape;
        }
        int largest = plan.sizes().stream().mapToInt(Integer::intValue).max().orElse(plan.messageSize());
        List<Level> rates = new java.util.ArrayList<>(plan.levels());
        if (plan.search() != null) {
            if (plan.search().maxRate() == 0) {
                return "a search against this server needs a highest rate (--search-max), at most " + maxRatePerSecond
                    + " messages/s";
            }
            rates.add(Level.of(plan.search().maxRate()));
        }
        long windowBytes = 0;
        for (Level level : rates) {
            if (level.isMax() || level.ratePerSecond() > maxRatePerSecond) {
                return "level " + level + " exceeds this server's limit of " + maxRatePerSecond + " messages/s";
            }
            if (level.ratePerSecond() > maxBytesPerSecond / largest) {
                return "level " + level + " of " + largest + "-byte messages exceeds this server's limit of "
                    + maxBytesPerSecond + " bytes/s";
            }
            long bytes = 0;
            for (int bits : SequenceTracker.windowsFor(plan, level)) {
                bytes += bits / 8;
            }
            windowBytes = Math.max(windowBytes, bytes);
        }
        int intervals = plan.intervals(plan.durationNs());
        if (intervals > MAX_INTERVALS) {
            return "the plan cuts each step into " + intervals + " intervals, beyond this server's limit of "
                + MAX_INTERVALS;
        }
        // Each flow may hold a delay histogram per interval until its step closes, and its loss ranges at their
        // bound (the sender chooses the gaps).
        windowBytes += (long) plan.ports() * intervals * io.lossprobe.core.accounting.IntervalTally.histogramBytes();
        windowBytes += plan.ports() * SequenceTracker.rangeBytesPerFlow();
        long transportBytes = 0;
        for (String name : plan.transports()) {
            Transport t = transports.get(name);
            if (t != null) {
                transportBytes = Math.max(transportBytes, t.memoryBytes(plan, options));
            }
        }
        if (windowBytes + transportBytes > maxMemoryBytes) {
            return "the plan needs " + mib(windowBytes + transportBytes) + " on this host (sequence windows "
                + mib(windowBytes) + " with the loss ranges and the intervals' histograms, transport buffers "
                + mib(transportBytes) + "), beyond this server's limit of "
                + mib(maxMemoryBytes);
        }
        return null;
    }

    /** Null when the plan's shape is within the limits (ports, durations, steps, the run's length), else why not. */
    private String refuseShape(Plan plan) {
        if (plan.ports() > maxPorts) {
            return "ports " + plan.ports() + " exceeds this server's limit of " + maxPorts;
        }
        if (plan.basePort() < minPort) {
            return "base port " + plan.basePort() + " is below this server's minimum of " + minPort;
        }
        if (plan.durationNs() > maxDurationNs || plan.warmupNs() > maxDurationNs || plan.drainNs() > maxDurationNs) {
            return "duration exceeds this server's limit of " + TimeUnit.NANOSECONDS.toSeconds(maxDurationNs) + "s";
        }
        int steps = plan.stepsPerTransport();
        if (steps > maxLevels) {
            return steps == plan.levels().size() ? plan.levels().size() + " levels exceed this server's limit of "
                + maxLevels : steps + " steps per transport (levels, search trials and steps, for each message size) "
                + "exceed this server's limit of " + maxLevels + " levels";
        }
        long stepNs = plan.warmupNs() + plan.durationNs() + plan.drainNs(); // each at most maxDurationNs: no overflow
        if (stepNs > maxTotalDurationNs / ((long) steps * plan.transports().size())) {
            return "the run takes " + TimeUnit.NANOSECONDS.toSeconds(stepNs) + "s x " + steps
                + (steps == plan.levels().size() ? " levels" : " steps") + " x " + plan.transports().size()
                + " transports, beyond this server's limit of "
                + TimeUnit.NANOSECONDS.toSeconds(maxTotalDurationNs) + "s";
        }
        return null;
    }

    private static String mib(long bytes) {
        return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
    }
}
