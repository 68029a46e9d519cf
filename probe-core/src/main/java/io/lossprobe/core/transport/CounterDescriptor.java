package io.lossprobe.core.transport;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one of a transport's counters means, declared once by the transport ({@link Transport#counters()}), in the
 * manner of Aeron's {@code SystemCounterDescriptor}. The declarations are written into the results next to the
 * values, say how a step's total is formed from the flows' values, and are how reports find retransmits, NAKs and
 * drops: by {@link Category}, never by the counter's name.
 *
 * @param key         the key in a {@link TransportReport} (step totals and per-flow maps alike)
 * @param kind        a delta over the step's window, or a value at the step's end
 * @param category    what the counter is evidence of
 * @param unit        what one unit counts: {@code messages}, {@code datagrams}, {@code bytes}, {@code us}, ...
 * @param description one sentence for a reader of the results
 */
public record CounterDescriptor(String key, Kind kind, Category category, String unit, String description) {
    /** How a counter's value is taken and how flows add up to a step's total. */
    public enum Kind {
        /** A delta over the step's window; a step's total is the sum over flows. */
        @JsonProperty("counter") COUNTER,
        /** A value at the step's end (rtt, cwnd, a high-water mark); a step's total is the largest over flows. */
        @JsonProperty("gauge") GAUGE
    }

    /** What a counter is evidence of; reports select by category. */
    public enum Category {
        /** Repair transmissions of data already sent (TCP segments, Aeron retransmits). */
        @JsonProperty("retransmit") RETRANSMIT,
        /** Loss reports sent by a receiver (Aeron NAKs), each counted once. */
        @JsonProperty("nak") NAK,
        /** Data the transport or the kernel dropped at a socket. */
        @JsonProperty("drop") DROP,
        /** Echo mode: replies the responder could not send. */
        @JsonProperty("replyLoss") REPLY_LOSS,
        /** The sender was held back (back pressure, flow control, a full write buffer). */
        @JsonProperty("backPressure") BACK_PRESSURE,
        /** Connections made, refused, ended or replaced. */
        @JsonProperty("connection") CONNECTION,
        /** Errors the transport or its driver reported. */
        @JsonProperty("error") ERROR,
        /** The transport's own view of the path (TCP's rtt, cwnd, reordering estimate). */
        @JsonProperty("path") PATH,
        /** Traffic volumes and protocol overhead, for context. */
        @JsonProperty("traffic") TRAFFIC,
        /** The other side's view of figures counted once elsewhere (NAKs as received, say). */
        @JsonProperty("other") OTHER
    }

    public CounterDescriptor {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(category, "category");
        Objects.requireNonNull(unit, "unit");
        Objects.requireNonNull(description, "description");
    }

    public static CounterDescriptor counter(String key, Category category, String unit, String description) {
        return new CounterDescriptor(key, Kind.COUNTER, category, unit, description);
    }

    public static CounterDescriptor gauge(String key, Category category, String unit, String description) {
        return new CounterDescriptor(key, Kind.GAUGE, category, unit, description);
    }

    /** The declarations of {@code parts}, in order (a transport declaring its counters in groups). */
    @SafeVarargs
    public static List<CounterDescriptor> concat(List<CounterDescriptor>... parts) {
        List<CounterDescriptor> all = new java.util.ArrayList<>();
        for (List<CounterDescriptor> part : parts) {
            all.addAll(part);
        }
        return List.copyOf(all);
    }

    /** {@code declared} by key; throws if a key is declared twice (two meanings for one name). */
    public static Map<String, CounterDescriptor> byKey(List<CounterDescriptor> declared) {
        Map<String, CounterDescriptor> byKey = new java.util.LinkedHashMap<>();
        for (CounterDescriptor d : declared) {
            if (byKey.putIfAbsent(d.key(), d) != null) {
                throw new IllegalArgumentException("counter '" + d.key() + "' is declared twice");
            }
        }
        return byKey;
    }

    /**
     * Adds one flow's {@code value} for {@code key} into a step's {@code totals} as {@code declared} says: summed
     * for a counter, the largest for a gauge. An undeclared key is summed.
     */
    public static void addToTotal(Map<String, Long> totals, Map<String, CounterDescriptor> declared, String key,
                                  long value) {
        CounterDescriptor d = declared.get(key);
        totals.merge(key, value, d != null && d.kind() == Kind.GAUGE ? Math::max : Long::sum);
    }
}
