package io.lossprobe.core.result;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/** Immutable copies of counter maps that keep a stable order in JSON. */
public final class Maps {
    private Maps() {
    }

    /** Sorted by key, unmodifiable; null becomes empty. */
    public static <V> Map<String, V> sorted(Map<String, V> map) {
        return map == null || map.isEmpty() ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(map));
    }

    /** In the given order, unmodifiable; null becomes empty. */
    public static <V> Map<String, V> ordered(Map<String, V> map) {
        return map == null || map.isEmpty() ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(map));
    }
}
