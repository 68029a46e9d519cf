package io.lossprobe.control;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import java.util.concurrent.TimeUnit;

/**
 * What a {@code lossprobe serve} accepts from a controller. The defaults are safe for a shared network: a
 * controller can ask for a modest sweep, not a flood, and not for ports below 1024.
 *
 * @param maxRatePerSecond highest level accepted (messages/s over all flows); {@code max} levels are refused
 * @param maxPorts         most flows per session
 * @param maxDurationNs    longest step window
 * @param maxSessions      concurrent controllers
 * @param minPort          lowest data port
 */
public record ServerLimits(long maxRatePerSecond, int maxPorts, long maxDurationNs, int maxSessions, int minPort,
                           int handshakeTimeoutMs, int idleTimeoutMs) {
    public static final ServerLimits DEFAULTS = new ServerLimits(2_000_000, 256, TimeUnit.MINUTES.toNanos(5), 4,
        1024, 5_000, 30_000);

    /** Null when the plan is acceptable, else the reason, fit to send back. */
    public String refuse(Plan plan) {
        if (plan.ports() > maxPorts) {
            return "ports " + plan.ports() + " exceeds this server's limit of " + maxPorts;
        }
        if (plan.basePort() < minPort) {
            return "base port " + plan.basePort() + " is below this server's minimum of " + minPort;
        }
        if (plan.durationNs() > maxDurationNs || plan.warmupNs() > maxDurationNs || plan.drainNs() > maxDurationNs) {
            return "duration exceeds this server's limit of " + TimeUnit.NANOSECONDS.toSeconds(maxDurationNs) + "s";
        }
        for (Level level : plan.levels()) {
            if (level.isMax() || level.ratePerSecond() > maxRatePerSecond) {
                return "level " + level + " exceeds this server's limit of " + maxRatePerSecond + " messages/s";
            }
        }
        return null;
    }
}
