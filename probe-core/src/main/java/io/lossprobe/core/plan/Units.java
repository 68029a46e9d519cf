package io.lossprobe.core.plan;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Parses the quantities users type: rates with decimal suffixes ({@code 30k} = 30,000, {@code 2.5M}),
 * durations ({@code 5s}, {@code 500ms}, {@code 2m}) and sizes with binary suffixes ({@code 4KiB} = 4096).
 * Every method throws {@link IllegalArgumentException} with a message fit to show a user.
 */
public final class Units {
    private Units() {
    }

    /** A count with an optional decimal suffix k, M or G; must be a positive whole number after scaling. */
    public static long parseDecimal(String text, String what) {
        String s = trimmed(text, what);
        long scale = 1;
        char last = s.charAt(s.length() - 1);
        switch (last) {
            case 'k', 'K' -> scale = 1_000L;
            case 'm', 'M' -> scale = 1_000_000L;
            case 'g', 'G' -> scale = 1_000_000_000L;
            default -> {
            }
        }
        String number = scale == 1 ? s : s.substring(0, s.length() - 1);
        BigDecimal value;
        try {
            value = new BigDecimal(number).multiply(BigDecimal.valueOf(scale));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what
                    + " is not a whole number with an optional k/M/G suffix: '" + text + "'");
        }
        if (value.signum() <= 0) {
            throw new IllegalArgumentException(what + " must be positive: '" + text + "'");
        }
        if (value.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException(what + " is too large: '" + text + "'");
        }
        try {
            return value.longValueExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(what
                    + " is not a whole number with an optional k/M/G suffix: '" + text + "'");
        }
    }

    /** A positive duration: {@code 250ms}, {@code 5s}, {@code 2m}, {@code 1h}; a bare number is seconds. */
    public static long parseDurationNs(String text, String what) {
        String s = trimmed(text, what).toLowerCase(Locale.ROOT);
        String[][] units = {{"ns", "1"}, {"us", "1000"}, {"ms", "1000000"}, {"s", "1000000000"},
            {"m", "60000000000"}, {"h", "3600000000000"}};
        String number = s;
        BigDecimal scale = BigDecimal.valueOf(TimeUnit.SECONDS.toNanos(1));
        for (String[] unit : units) {
            if (s.endsWith(unit[0]) && Character.isDigit(s.charAt(Math.max(0, s.length() - unit[0].length() - 1)))) {
                number = s.substring(0, s.length() - unit[0].length());
                scale = new BigDecimal(unit[1]);
                break;
            }
        }
        BigDecimal ns;
        try {
            ns = new BigDecimal(number).multiply(scale);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " is not a duration like 500ms, 5s or 2m: '" + text + "'");
        }
        if (ns.signum() < 0) {
            throw new IllegalArgumentException(what + " must not be negative: '" + text + "'");
        }
        // Compared before any rounding: a value past 2^63 ns (292 years) once wrapped to a tiny one
        // (18446744073709551617ns ran a 1 ns step), and rounding 1e999999999 would build a billion digits.
        if (ns.compareTo(MAX_NS) > 0) {
            throw new IllegalArgumentException(what + " is too long: '" + text + "'");
        }
        if (ns.compareTo(BigDecimal.ONE) < 0) {
            return ns.compareTo(HALF) >= 0 ? 1 : 0;
        }
        return ns.setScale(0, RoundingMode.HALF_UP).longValueExact();
    }

    private static final BigDecimal MAX_NS = BigDecimal.valueOf(Long.MAX_VALUE);
    private static final BigDecimal HALF = new BigDecimal("0.5");

    /** A size in bytes with an optional binary suffix KiB or MiB (K and M are read the same way). */
    public static long parseBytes(String text, String what) {
        String s = trimmed(text, what);
        String lower = s.toLowerCase(Locale.ROOT);
        long scale = 1;
        String number = s;
        if (lower.endsWith("kib") || lower.endsWith("mib")) {
            scale = lower.endsWith("kib") ? 1024 : 1024 * 1024;
            number = s.substring(0, s.length() - 3);
        } else if (lower.endsWith("k") || lower.endsWith("m")) {
            scale = lower.endsWith("k") ? 1024 : 1024 * 1024;
            number = s.substring(0, s.length() - 1);
        } else if (lower.endsWith("b")) {
            number = s.substring(0, s.length() - 1);
        }
        long value;
        try {
            value = Long.parseLong(number.trim());
        } catch (NumberFormatException e) {
            if (number.trim().matches("[0-9]+")) {
                throw new IllegalArgumentException(what + " is too large: '" + text + "'");
            }
            throw new IllegalArgumentException(what + " is not a size like 64, 1KiB or 4MiB: '" + text + "'");
        }
        if (value < 0) {
            throw new IllegalArgumentException(what + " must not be negative: '" + text + "'");
        }
        if (value > Long.MAX_VALUE / scale) {
            throw new IllegalArgumentException(what + " is too large: '" + text + "'");
        }
        return value * scale;
    }

    private static String trimmed(String text, String what) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException(what + " is empty");
        }
        return text.trim();
    }

    /** Formats a rate the way users type it: 30k, 2.5M. */
    public static String formatRate(long perSecond) {
        if (perSecond >= 1_000_000 && perSecond % 100_000 == 0) {
            return stripZeros(perSecond / 1_000_000.0) + "M";
        }
        if (perSecond >= 1_000 && perSecond % 100 == 0) {
            return stripZeros(perSecond / 1_000.0) + "k";
        }
        return Long.toString(perSecond);
    }

    /** Formats a duration in the largest unit that holds it exactly: 10ms, 1500us, 2s, 0. */
    public static String formatDurationNs(long ns) {
        long[] scale = {3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L};
        String[] unit = {"h", "m", "s", "ms", "us"};
        for (int i = 0; i < scale.length; i++) {
            if (ns != 0 && ns % scale[i] == 0) {
                return ns / scale[i] + unit[i];
            }
        }
        return ns == 0 ? "0" : ns + "ns";
    }

    private static String stripZeros(double v) {
        return BigDecimal.valueOf(v).stripTrailingZeros().toPlainString();
    }
}
