package io.lossprobe.core.plan;

import java.util.Locale;

/**
 * How a step spreads its messages over time ({@code --pattern}). Whatever the pattern, a level is the average rate
 * and a phase schedules exactly as many messages as the constant pattern does ({@code floor(rate x duration)}): only
 * the intended send time of each message changes.
 *
 * <ul>
 *   <li>{@code constant}: evenly spaced (the default);</li>
 *   <li>{@code burst:N}: groups of N messages due together, a group where the constant schedule has its first
 *       message; {@code burst:N/INTERVAL} the same, with the promise that N per INTERVAL is every flow's rate (the
 *       plan refuses it otherwise);</li>
 *   <li>{@code poisson}: the phase's messages at random times, uniform over the phase (Poisson arrivals given the
 *       count: exponential gaps at the rate), from the plan's seed;</li>
 *   <li>{@code onoff:ON/OFF}: in each period of ON + OFF, the messages the constant schedule puts in the period are
 *       sent inside its first ON, at the rate that fits.</li>
 * </ul>
 *
 * @param kind       which pattern
 * @param burst      burst: messages per group (else 0)
 * @param intervalNs burst: the group interval given ({@code burst:N/INTERVAL}; else 0)
 * @param onNs       onoff: the sending part of each period (else 0)
 * @param offNs      onoff: the silent part of each period (else 0)
 */
public record SendPattern(Kind kind, long burst, long intervalNs, long onNs, long offNs) {
    /** The kinds of pattern. */
    public enum Kind { CONSTANT, BURST, POISSON, ONOFF }

    public static final SendPattern CONSTANT = new SendPattern(Kind.CONSTANT, 0, 0, 0, 0);
    /** The largest burst: a group far larger than a step is just the step at once. */
    public static final long MAX_BURST = 1_000_000_000L;
    private static final String FORMS = "give constant, burst:N, burst:N/INTERVAL, poisson or onoff:ON/OFF";

    public SendPattern {
        if (kind == null) {
            throw new IllegalArgumentException("--pattern has no kind");
        }
    }

    /** A pattern from its text ({@code --pattern}); null or blank is {@code constant}. */
    public static SendPattern parse(String text) {
        if (text == null || text.isBlank()) {
            return CONSTANT;
        }
        String s = text.strip().toLowerCase(Locale.ROOT);
        if (s.equals("constant")) {
            return CONSTANT;
        }
        if (s.equals("poisson")) {
            return new SendPattern(Kind.POISSON, 0, 0, 0, 0);
        }
        if (s.startsWith("burst:")) {
            return parseBurst(text.strip(), s.substring("burst:".length()));
        }
        if (s.startsWith("onoff:")) {
            return parseOnOff(text.strip(), s.substring("onoff:".length()));
        }
        throw new IllegalArgumentException("--pattern: unknown pattern '" + text.strip() + "'; " + FORMS);
    }

    private static SendPattern parseBurst(String text, String rest) {
        int slash = rest.indexOf('/');
        String count = slash < 0 ? rest : rest.substring(0, slash);
        long n;
        try {
            n = Long.parseLong(count);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--pattern " + text + ": the burst size '" + count
                + "' is not a whole number (burst:N or burst:N/INTERVAL, e.g. burst:64/10ms)");
        }
        if (n < 1 || n > MAX_BURST) {
            throw new IllegalArgumentException("--pattern " + text + ": the burst size must be between 1 and "
                + MAX_BURST);
        }
        long interval = slash < 0 ? 0 : duration(text, rest.substring(slash + 1), "the burst interval", false);
        return new SendPattern(Kind.BURST, n, interval, 0, 0);
    }

    private static SendPattern parseOnOff(String text, String rest) {
        int slash = rest.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("--pattern " + text + ": give onoff:ON/OFF, e.g. onoff:100ms/100ms");
        }
        long on = duration(text, rest.substring(0, slash), "ON", false);
        long off = duration(text, rest.substring(slash + 1), "OFF", true);
        return new SendPattern(Kind.ONOFF, 0, 0, on, off);
    }

    private static long duration(String text, String part, String what, boolean zeroAllowed) {
        long ns;
        try {
            ns = Units.parseDurationNs(part, what);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--pattern " + text + ": " + what + " '" + part.strip()
                + "' is not a duration (100ms, 1s)");
        }
        if ((ns == 0 && !zeroAllowed) || ns > Plan.MAX_PHASE_NS) {
            throw new IllegalArgumentException("--pattern " + text + ": " + what + " must be "
                + (zeroAllowed ? "" : "above 0 and ") + "at most 24h");
        }
        return ns;
    }

    public boolean isConstant() {
        return kind == Kind.CONSTANT;
    }

    /** Whether the pattern draws from the plan's seed. */
    public boolean random() {
        return kind == Kind.POISSON;
    }

    /**
     * Why this pattern cannot pace {@code flowRate} messages per second, or null when it can: a
     * {@code burst:N/INTERVAL} is N per INTERVAL, exactly.
     */
    public String refusal(long flowRate) {
        if (kind != Kind.BURST || intervalNs == 0) {
            return null;
        }
        if (flowRate == 0) {
            return "--pattern " + this + " has a rate of its own; the level 'max' has none (use burst:" + burst + ")";
        }
        long perInterval;
        try {
            perInterval = Math.multiplyExact(flowRate, intervalNs);
        } catch (ArithmeticException e) {
            perInterval = -1;
        }
        if (perInterval == Math.multiplyExact(burst, 1_000_000_000L)) {
            return null;
        }
        return "--pattern " + this + " is " + burst + " messages per " + Units.formatDurationNs(intervalNs)
            + " per flow, but a flow of this run sends " + flowRate + "/s; give a level that makes "
            + burst + " per " + Units.formatDurationNs(intervalNs) + " per flow, or burst:" + burst
            + " (the level sets the rate)";
    }

    @Override
    public String toString() {
        return switch (kind) {
            case CONSTANT -> "constant";
            case POISSON -> "poisson";
            case BURST -> "burst:" + burst + (intervalNs == 0 ? "" : "/" + Units.formatDurationNs(intervalNs));
            case ONOFF -> "onoff:" + Units.formatDurationNs(onNs) + "/" + Units.formatDurationNs(offNs);
        };
    }
}
