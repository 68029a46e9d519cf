package io.lossprobe.core.engine;

import io.lossprobe.core.counters.ProcFiles;
import io.lossprobe.core.result.Environment;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;

/** Describes the machine a run happens on. */
public final class EnvironmentProbe {
    private EnvironmentProbe() {
    }

    public static String version() {
        String v = EnvironmentProbe.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }

    /**
     * The machine, plus what the transports reported about themselves (keys prefixed by transport, e.g.
     * {@code udp.receiveBufferGranted}, {@code tcp.noDelay}): buffer sizes go to {@code socketBuffers} with the
     * {@code net.core.*} sysctls, everything else to {@code transportSettings}.
     */
    public static Environment describe(Map<String, Long> transportFacts) {
        Map<String, Long> buffers = new HashMap<>();
        Map<String, Long> settings = new HashMap<>();
        transportFacts.forEach((key, value) -> (isSocketBuffer(key) ? buffers : settings).put(key, value));
        for (String key : new String[] {"rmem_max", "wmem_max", "rmem_default", "wmem_default"}) {
            long v = ProcFiles.readLong("/proc/sys/net/core/" + key);
            if (v >= 0) {
                buffers.put("net.core." + key, v);
            }
        }
        return new Environment(version(), hostName(), System.getProperty("os.name"),
            System.getProperty("os.version"), Runtime.getRuntime().availableProcessors(),
            System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"), buffers, settings);
    }

    /** A kernel buffer limit or a socket buffer size a transport requested or was granted. */
    static boolean isSocketBuffer(String key) {
        return key.startsWith("net.core.") || key.endsWith("BufferRequested") || key.endsWith("BufferGranted");
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return System.getenv().getOrDefault("HOSTNAME", "unknown");
        }
    }
}
