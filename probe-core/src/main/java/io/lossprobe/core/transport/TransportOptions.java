package io.lossprobe.core.transport;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Checks a run's transport options against what its transports declare ({@link Transport#options()}), before any
 * traffic: an unknown key or a bad value is refused in one line, with the known keys and the likeliest one meant.
 * The same declarations decide which options travel to a server.
 */
public final class TransportOptions {
    private TransportOptions() {
    }

    /** Every declaration of {@code transports}, by key (a key two transports share, such as rcvbuf, lists both). */
    public static Map<String, List<TransportOption<?>>> declared(Collection<Transport> transports) {
        Map<String, List<TransportOption<?>>> out = new TreeMap<>();
        for (Transport t : transports) {
            for (TransportOption<?> o : t.options()) {
                out.computeIfAbsent(o.key(), k -> new ArrayList<>()).add(o);
            }
        }
        return out;
    }

    /**
     * Refuses ({@link IllegalArgumentException}, one line) an option no transport of {@code known} declares, or a
     * value a declaration of it does not take; also checks the system properties that set defaults
     * ({@code -Dlossprobe.udp.gso}). {@code known} is every transport the options may be meant for.
     */
    public static void validate(Map<String, String> options, Collection<Transport> known) {
        Map<String, List<TransportOption<?>>> declared = declared(known);
        check(options, declared, false);
        for (List<TransportOption<?>> decls : declared.values()) {
            for (TransportOption<?> d : decls) {
                if (!options.containsKey(d.key())) {
                    d.read(Map.of()); // a bad -Dlossprobe.<key> fails here, before any traffic
                }
            }
        }
    }

    /** Every key declared, every value taken by each declaration of its key; on a server, only server options. */
    private static void check(Map<String, String> options, Map<String, List<TransportOption<?>>> declared,
                              boolean onServer) {
        for (Map.Entry<String, String> e : new TreeMap<>(options).entrySet()) {
            List<TransportOption<?>> decls = declared.get(e.getKey());
            if (decls == null) {
                throw new IllegalArgumentException(unknown(e.getKey(), declared.keySet()));
            }
            if (onServer && decls.stream().noneMatch(TransportOption::appliesOnServer)) {
                throw new IllegalArgumentException("transport option '" + e.getKey()
                    + "' applies on the controller's host only; a server does not take it");
            }
            for (TransportOption<?> d : decls) {
                try {
                    d.parse(e.getValue());
                } catch (IllegalArgumentException ex) {
                    throw new IllegalArgumentException(onServer ? ex.getMessage()
                        : "-X " + e.getKey() + "=" + e.getValue() + ": " + ex.getMessage(), ex);
                }
            }
        }
    }

    /**
     * The options a controller forwards to a server for {@code transports}: exactly those some transport of the
     * run declares {@link TransportOption#appliesOnServer()}.
     */
    public static Map<String, String> forServer(Map<String, String> options, Collection<Transport> transports) {
        Map<String, List<TransportOption<?>>> declared = declared(transports);
        Map<String, String> out = new TreeMap<>();
        options.forEach((key, value) -> {
            List<TransportOption<?>> decls = declared.get(key);
            if (decls != null && decls.stream().anyMatch(TransportOption::appliesOnServer)) {
                out.put(key, value);
            }
        });
        return out;
    }

    /**
     * What a server accepts from a controller: every key declared by one of {@code transports} as applying on a
     * server, with a value every such declaration takes; else {@link IllegalArgumentException}, one line.
     */
    public static void validateOnServer(Map<String, String> options, Collection<Transport> transports) {
        check(options, declared(transports), true);
    }

    /** Keys of {@code options} that none of {@code inRun} declares (meant for a transport this run does not use). */
    public static List<String> unused(Map<String, String> options, Collection<Transport> inRun) {
        Map<String, List<TransportOption<?>>> declared = declared(inRun);
        return options.keySet().stream().filter(k -> !declared.containsKey(k)).sorted().toList();
    }

    private static String unknown(String key, Collection<String> known) {
        String suggestion = suggest(key, known);
        return "unknown transport option '" + key + "'" + (suggestion == null ? "" : " (did you mean "
            + suggestion + "?)") + "; known: " + String.join(", ", new TreeSet<>(known));
    }

    /** The known key nearest to {@code key} (edit distance, ignoring case), or null when none is close. */
    static String suggest(String key, Collection<String> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String k : known) {
            int d = distance(key.toLowerCase(Locale.ROOT), k.toLowerCase(Locale.ROOT));
            if (d < bestDistance) {
                bestDistance = d;
                best = k;
            }
        }
        // Close enough to be a typo: a third of the key's length, at least 2 edits.
        return best != null && bestDistance <= Math.max(2, key.length() / 3) ? best : null;
    }

    /**
     * Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours (the command
     * line's "did you mean" uses it too).
     */
    public static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
