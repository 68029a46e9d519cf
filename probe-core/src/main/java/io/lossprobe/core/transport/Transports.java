package io.lossprobe.core.transport;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.ServiceLoader;

/** The transports on the class path, by name, in a stable order (udp, tcp, aeron, then others). */
public final class Transports {
    private static final java.util.List<String> ORDER = java.util.List.of("udp", "tcp", "aeron");

    private Transports() {
    }

    public static Map<String, Transport> available() {
        Map<String, Transport> found = new java.util.TreeMap<>();
        for (Transport t : ServiceLoader.load(Transport.class)) {
            found.put(t.name(), t);
        }
        Map<String, Transport> ordered = new LinkedHashMap<>();
        for (String name : ORDER) {
            if (found.containsKey(name)) {
                ordered.put(name, found.remove(name));
            }
        }
        ordered.putAll(found);
        return ordered;
    }
}
