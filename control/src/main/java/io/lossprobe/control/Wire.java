package io.lossprobe.control;

import java.util.List;
import java.util.Map;

/** Checks the typed control messages make on what they are built from: a failed check is a protocol error. */
final class Wire {
    /** Most entries in one counter map (a step's counters, a flow's, an environment). */
    static final int MAX_COUNTERS = 4096;

    private Wire() {
    }

    static <T> T present(T value, String field) {
        if (value == null) {
            throw new IllegalArgumentException("missing field '" + field + "'");
        }
        return value;
    }

    /** A handshake nonce: base64, 16 to 128 characters. */
    static String nonce(String value, String field) {
        present(value, field);
        if (value.length() < 16 || value.length() > 128 || !value.matches("[A-Za-z0-9+/=]+")) {
            throw new IllegalArgumentException("field '" + field + "' must be 16 to 128 base64 characters");
        }
        return value;
    }

    /** A transport's name: lower-case letters, digits, '-' or '_', 1 to 32 characters. */
    static String name(String value, String field) {
        present(value, field);
        if (!value.matches("[a-z0-9_-]{1,32}")) {
            throw new IllegalArgumentException("field '" + field + "' must be a transport name");
        }
        return value;
    }

    /** An IP address or host name as the other end wrote it: present, short, and of address characters only. */
    static String address(String value, String field) {
        present(value, field);
        if (value.isEmpty() || value.length() > 255 || !value.matches("[0-9A-Za-z.:%_-]+")) {
            throw new IllegalArgumentException("field '" + field + "' must be an address");
        }
        return value;
    }

    static long atLeast(long value, long min, String field) {
        if (value < min) {
            throw new IllegalArgumentException("field '" + field + "' must be at least " + min);
        }
        return value;
    }

    static long[] nonNegative(long[] values, String field) {
        present(values, field);
        for (long v : values) {
            atLeast(v, 0, field);
        }
        return values;
    }

    /**
     * A counter map: keys of 1 to 200 characters that print as they are (no control or formatting characters:
     * they reach results, reports and terminals), no missing values, bounded size.
     */
    static Map<String, Long> counters(Map<String, Long> map, String field) {
        present(map, field);
        if (map.size() > MAX_COUNTERS) {
            throw new IllegalArgumentException("field '" + field + "' has more than " + MAX_COUNTERS + " entries");
        }
        map.forEach((k, v) -> {
            if (v == null || k.isEmpty() || k.length() > 200 || !PeerText.clean(k).equals(k)) {
                throw new IllegalArgumentException("field '" + field + "' has a bad entry");
            }
        });
        return map;
    }

    static Map<Integer, Map<String, Long>> flowCounters(Map<Integer, Map<String, Long>> map, String field) {
        present(map, field);
        if (map.size() > MAX_COUNTERS) {
            throw new IllegalArgumentException("field '" + field + "' has more than " + MAX_COUNTERS + " flows");
        }
        map.forEach((flow, counters) -> {
            atLeast(flow, 0, field);
            counters(counters, field);
        });
        return map;
    }

    /** Words from the peer (notes, error messages): made safe to print, at most {@link PeerText#MAX_CHARS}. */
    static List<String> texts(List<String> values, String field) {
        present(values, field);
        if (values.size() > 256) {
            throw new IllegalArgumentException("field '" + field + "' has more than 256 entries");
        }
        return values.stream().map(v -> PeerText.clean(present(v, field))).toList();
    }
}
