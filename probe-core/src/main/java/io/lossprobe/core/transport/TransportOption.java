package io.lossprobe.core.transport;

import io.lossprobe.core.plan.Units;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * One setting a transport reads from the run's options ({@code -X key=value}), declared once by the transport
 * ({@link Transport#options()}): its key, the values it takes, its default, and whether a controller may set it on
 * a {@code lossprobe serve}. The same declaration validates a value before any traffic ({@link TransportOptions}),
 * decides what is forwarded to a server, and is how the transport itself reads the value ({@link #read}), so an
 * option means the same wherever it is read.
 *
 * @param <T> the parsed value's type
 */
public final class TransportOption<T> {
    /** Prefix of the system property that sets an option's default ({@code -Dlossprobe.udp.gso=off}). */
    public static final String PROPERTY_PREFIX = "lossprobe.";

    /** Turns the text of a value into the value; throws {@link IllegalArgumentException} saying what is expected. */
    @FunctionalInterface
    public interface Parser<T> {
        T parse(String text);
    }

    private final String key;
    private final String values;
    private final Parser<T> parser;
    private final T defaultValue;
    private final String defaultText;
    private final String description;
    private final boolean appliesOnServer;
    private final boolean systemProperty;

    private TransportOption(String key, String values, Parser<T> parser, T defaultValue, String defaultText,
                            String description, boolean appliesOnServer, boolean systemProperty) {
        this.key = Objects.requireNonNull(key);
        this.values = values;
        this.parser = parser;
        this.defaultValue = defaultValue;
        this.defaultText = defaultText;
        this.description = description;
        this.appliesOnServer = appliesOnServer;
        this.systemProperty = systemProperty;
    }

    /** One of {@code choices} (case-insensitive), read as its lower-case form. */
    public static TransportOption<String> choice(String key, String defaultValue, String description,
                                                 String... choices) {
        String list = String.join(", ", choices);
        return new TransportOption<>(key, list, text -> {
            String v = text.trim().toLowerCase(Locale.ROOT);
            if (!Arrays.asList(choices).contains(v)) {
                throw new IllegalArgumentException(key + " must be one of " + list + ", not '" + text + "'");
            }
            return v;
        }, defaultValue, defaultValue, description, true, false);
    }

    /** true or false. */
    public static TransportOption<Boolean> bool(String key, boolean defaultValue, String description) {
        return new TransportOption<>(key, "true, false", text -> switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> Boolean.TRUE;
            case "false" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException(key + " must be true or false, not '" + text + "'");
        }, defaultValue, Boolean.toString(defaultValue), description, true, false);
    }

    /**
     * A size in bytes (64, 1KiB, 4MiB) within [min, max]; {@code defaultValue} may be null (not set: the transport
     * then leaves the setting alone), {@code defaultText} says what that means.
     */
    public static TransportOption<Integer> bytes(String key, Integer defaultValue, String defaultText, int min,
                                                 int max, String description) {
        String range = size(min) + " to " + size(max);
        return new TransportOption<>(key, "bytes, " + range, text -> {
            long v = Units.parseBytes(text, key);
            if (v < min || v > max) {
                throw new IllegalArgumentException(key + " must be " + range + ", not '" + text + "'");
            }
            return (int) v;
        }, defaultValue, defaultText, description, true, false);
    }

    /** A whole number within [min, max]. */
    public static TransportOption<Long> number(String key, long defaultValue, long min, long max,
                                               String description) {
        String range = min + " to " + max;
        return new TransportOption<>(key, "whole number, " + range, text -> {
            long v;
            try {
                v = Long.parseLong(text.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(key + " must be a whole number, not '" + text + "'");
            }
            if (v < min || v > max) {
                throw new IllegalArgumentException(key + " must be " + range + ", not '" + text + "'");
            }
            return v;
        }, defaultValue, Long.toString(defaultValue), description, true, false);
    }

    /** {@code auto} or a whole number within [min, max]; read as the text ({@code auto} or the number). */
    public static TransportOption<String> autoOrNumber(String key, long min, long max, String description) {
        String range = "auto, or " + min + " to " + max;
        return new TransportOption<>(key, range, text -> {
            String v = text.trim().toLowerCase(Locale.ROOT);
            if (v.equals("auto")) {
                return v;
            }
            try {
                long n = Long.parseLong(v);
                if (n >= min && n <= max) {
                    return Long.toString(n);
                }
            } catch (NumberFormatException e) {
                // Refused below, with the rest.
            }
            throw new IllegalArgumentException(key + " must be " + range + ", not '" + text + "'");
        }, "auto", "auto", description, true, false);
    }

    /** Free text (e.g. a path) up to 4,096 characters; {@code defaultValue} may be null (not set). */
    public static TransportOption<String> text(String key, String defaultText, String description) {
        return new TransportOption<>(key, "text", text -> {
            if (text.isEmpty() || text.length() > 4096) {
                throw new IllegalArgumentException(key + " must be 1 to 4096 characters");
            }
            return text;
        }, null, defaultText, description, true, false);
    }

    /** The same option with a further rule a parsed value must follow ({@code rule} says it, for the message). */
    public TransportOption<T> requiring(Predicate<T> ok, String rule) {
        Parser<T> inner = parser;
        return new TransportOption<>(key, values + ", " + rule, text -> {
            T v = inner.parse(text);
            if (!ok.test(v)) {
                throw new IllegalArgumentException(key + " must be " + rule + ", not '" + text + "'");
            }
            return v;
        }, defaultValue, defaultText, description, appliesOnServer, systemProperty);
    }

    /** The same option, parsed by another parser (values says what it takes). */
    public TransportOption<T> parsedBy(String newValues, Parser<T> newParser) {
        return new TransportOption<>(key, newValues, newParser, defaultValue, defaultText, description,
            appliesOnServer, systemProperty);
    }

    /**
     * The same option for this host only: never forwarded to a server, and refused by one (a file path, or a
     * setting that names something on this host).
     */
    public TransportOption<T> localOnly() {
        return new TransportOption<>(key, values, parser, defaultValue, defaultText, description, false,
            systemProperty);
    }

    /** The same option whose default can also be set by the system property {@code lossprobe.<key>}. */
    public TransportOption<T> withSystemProperty() {
        return new TransportOption<>(key, values, parser, defaultValue, defaultText, description, appliesOnServer,
            true);
    }

    public String key() {
        return key;
    }

    /** What values it takes, in words ({@code true, false}; {@code bytes, 1 B to 2 GiB}). */
    public String values() {
        return values;
    }

    /** The default in words. */
    public String defaultText() {
        return defaultText;
    }

    public String description() {
        return description;
    }

    /** True when a controller may set it on a server: forwarded by {@code run --target}, accepted by serve. */
    public boolean appliesOnServer() {
        return appliesOnServer;
    }

    /** The system property that sets its default, or null. */
    public String systemProperty() {
        return systemProperty ? PROPERTY_PREFIX + key : null;
    }

    /** Parses {@code text}; {@link IllegalArgumentException} with a message fit for the command line if bad. */
    public T parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException(key + " has no value");
        }
        return parser.parse(text);
    }

    /**
     * The value in effect: {@code options}' value, else the system property's (when declared with one), else the
     * default (which may be null: not set). A bad value throws {@link IllegalArgumentException}.
     */
    public T read(Map<String, String> options) {
        String given = options.get(key);
        if (given == null && systemProperty) {
            String property = System.getProperty(PROPERTY_PREFIX + key);
            if (property != null) {
                try {
                    return parse(property);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("-D" + PROPERTY_PREFIX + key + ": " + e.getMessage(), e);
                }
            }
        }
        return given == null ? defaultValue : parse(given);
    }

    /** 65536 as 64KiB: the largest binary unit that divides it. */
    private static String size(long bytes) {
        String[] units = {"GiB", "MiB", "KiB"};
        for (int i = 0; i < units.length; i++) {
            long unit = 1L << (30 - 10 * i);
            if (bytes >= unit && bytes % unit == 0) {
                return bytes / unit + units[i];
            }
        }
        return Long.toString(bytes);
    }

    @Override
    public String toString() {
        return key;
    }
}
