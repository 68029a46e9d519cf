package io.lossprobe.core.transport;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The one-line error a receiver gives when it cannot take its ports. When the ports lie in the kernel's
 * ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by default), an outgoing connection of any
 * program, or one of lossprobe's own earlier connections still in TIME_WAIT, may hold one of them; the
 * message says so and names the two ways out.
 */
public final class BindFailure {
    private static final Path RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

    private BindFailure() {
    }

    public static IOException of(String what, Object address, int firstPort, int lastPort, Throwable cause) {
        String message = "cannot " + what + " on " + io.lossprobe.core.plan.Addresses.text(String.valueOf(address))
            + " ports " + firstPort + "-" + lastPort + ": "
            + cause.getMessage();
        int[] range = ephemeralRange(RANGE);
        if (range != null && firstPort <= range[1] && lastPort >= range[0]) {
            message += " (these ports are inside the kernel's ephemeral range " + range[0] + "-" + range[1]
                + ", where outgoing connections take their local ports: choose --base-port outside it, or"
                + " reserve the ports with sysctl net.ipv4.ip_local_reserved_ports)";
        }
        return new IOException(message, cause);
    }

    /** The ephemeral port range in {@code file} (two numbers), or null where it cannot be read. */
    static int[] ephemeralRange(Path file) {
        try {
            // ProcFiles.read, not Files.readString: a sysctl file read that way gives its first byte only ("3").
            String text = io.lossprobe.core.counters.ProcFiles.read(file.toString());
            String[] parts = text.trim().split("\\s+");
            return parts.length == 2 ? new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])} : null;
        } catch (RuntimeException e) {
            return null;
        }
    }
}
