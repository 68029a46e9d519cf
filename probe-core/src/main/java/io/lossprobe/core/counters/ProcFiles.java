package io.lossprobe.core.counters;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Parsers for the Linux files lossprobe reads its kernel counters from. Each takes the file's text so tests can
 * feed recorded copies; the {@code read*} methods read the live files and return empty maps where they are
 * missing (another OS, a restricted container).
 */
public final class ProcFiles {
    /** Larger than any sysctl value, so a sysctl is read whole by the first read. */
    private static final int READ_CHUNK_BYTES = 64 * 1024;

    private ProcFiles() {
    }

    /**
     * Parses the header/value line pairs of /proc/net/snmp and /proc/net/netstat into {@code "Udp.InErrors"}
     * style keys, keeping only the sections named.
     */
    public static Map<String, Long> parseSnmp(String text, Set<String> sections) {
        Map<String, Long> out = new HashMap<>();
        String[] lines = text.split("\n");
        for (int i = 0; i + 1 < lines.length; i++) {
            String[] names = lines[i].trim().split("\\s+");
            String[] values = lines[i + 1].trim().split("\\s+");
            if (names.length < 2 || !names[0].endsWith(":") || !names[0].equals(values[0])) {
                continue;
            }
            String section = names[0].substring(0, names[0].length() - 1);
            i++;
            if (!sections.contains(section)) {
                continue;
            }
            for (int k = 1; k < names.length && k < values.length; k++) {
                try {
                    out.put(section + "." + names[k], Long.parseLong(values[k]));
                } catch (NumberFormatException e) {
                    // A field that is not a counter (none today); skip rather than fail the run.
                }
            }
        }
        return out;
    }

    /**
     * Parses /proc/net/snmp6's name/value lines ({@code "Udp6InErrors   0"}) into {@code "Udp6.InErrors"} style keys,
     * keeping only the sections (name prefixes) given; empty when the file is absent (IPv6 disabled).
     */
    public static Map<String, Long> parseSnmp6(String text, Set<String> sections) {
        Map<String, Long> out = new HashMap<>();
        for (String line : text.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length != 2) {
                continue;
            }
            for (String section : sections) {
                if (f[0].startsWith(section) && f[0].length() > section.length()
                    && Character.isUpperCase(f[0].charAt(section.length()))) {
                    try {
                        out.put(section + "." + f[0].substring(section.length()), Long.parseLong(f[1]));
                    } catch (NumberFormatException e) {
                        // not a counter; skip rather than fail the run
                    }
                }
            }
        }
        return out;
    }

    /** Parses /proc/net/dev into {@code "dev.lo.rxPackets"} style keys. */
    public static Map<String, Long> parseNetDev(String text) {
        String[] fields = {"rxBytes", "rxPackets", "rxErrors", "rxDrops", "rxFifo", "rxFrame", "rxCompressed",
            "rxMulticast", "txBytes", "txPackets", "txErrors", "txDrops", "txFifo", "txCollisions", "txCarrier",
            "txCompressed"};
        Map<String, Long> out = new HashMap<>();
        for (String line : text.split("\n")) {
            int colon = line.indexOf(':');
            if (colon < 0 || line.contains("|")) {
                continue;
            }
            String dev = line.substring(0, colon).trim();
            String[] values = line.substring(colon + 1).trim().split("\\s+");
            for (int k = 0; k < fields.length && k < values.length; k++) {
                out.put("dev." + dev + "." + fields[k], Long.parseLong(values[k]));
            }
        }
        return out;
    }

    /**
     * Sums /proc/net/softnet_stat over the CPUs (one line each, hexadecimal): {@code Softnet.processed} packets taken
     * off the per-CPU backlog, {@code Softnet.dropped} packets dropped because the backlog was full
     * (net.core.netdev_max_backlog: loopback, veth and RPS traffic queue there before any socket) and
     * {@code Softnet.timeSqueeze} times the receive softirq ran out of budget with work left.
     */
    public static Map<String, Long> parseSoftnet(String text) {
        long processed = 0;
        long dropped = 0;
        long squeezed = 0;
        boolean any = false;
        for (String line : text.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 3) {
                continue;
            }
            try {
                processed += Long.parseLong(f[0], 16);
                dropped += Long.parseLong(f[1], 16);
                squeezed += Long.parseLong(f[2], 16);
                any = true;
            } catch (NumberFormatException e) {
                // not a counters line
            }
        }
        Map<String, Long> out = new HashMap<>();
        if (any) {
            out.put("Softnet.processed", processed);
            out.put("Softnet.dropped", dropped);
            out.put("Softnet.timeSqueeze", squeezed);
        }
        return out;
    }

    /**
     * Sums the {@code drops} column of /proc/net/udp (or udp6) by local port: datagrams the kernel dropped at
     * that socket because its receive buffer was full (or a socket filter refused them).
     */
    public static Map<Integer, Long> parseUdpDrops(String text) {
        Map<Integer, Long> out = new HashMap<>();
        String[] lines = text.split("\n");
        for (int i = 1; i < lines.length; i++) {
            String[] f = lines[i].trim().split("\\s+");
            if (f.length < 13) {
                continue;
            }
            String local = f[1];
            int colon = local.lastIndexOf(':');
            if (colon < 0) {
                continue;
            }
            int port = Integer.parseInt(local.substring(colon + 1), 16);
            out.merge(port, Long.parseLong(f[f.length - 1]), Long::sum);
        }
        return out;
    }

    /** Parses the first line of /proc/stat into {busy, total} jiffies over all CPUs. */
    public static long[] parseCpuLine(String text) {
        String first = text.lines().findFirst().orElse("");
        String[] f = first.trim().split("\\s+");
        if (f.length < 5 || !f[0].equals("cpu")) {
            return new long[] {0, 0};
        }
        long total = 0;
        // user nice system idle iowait irq softirq steal (guest time is already inside user).
        for (int k = 1; k < Math.min(f.length, 9); k++) {
            total += Long.parseLong(f[k]);
        }
        long idle = Long.parseLong(f[4]) + (f.length > 5 ? Long.parseLong(f[5]) : 0);
        return new long[] {total - idle, total};
    }

    public static Map<Integer, Long> readUdpDrops() {
        Map<Integer, Long> out = new HashMap<>(parseUdpDrops(read("/proc/net/udp")));
        parseUdpDrops(read("/proc/net/udp6")).forEach((port, drops) -> out.merge(port, drops, Long::sum));
        return out;
    }

    /** A sysctl or other one-number file, or -1 when it cannot be read. */
    public static long readLong(String path) {
        String text = read(path).trim();
        try {
            return text.isEmpty() ? -1 : Long.parseLong(text);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * The whole file as text, or "" when it cannot be read. Not {@code Files.readString}: /proc files report size 0,
     * so the JDK reads one byte to probe for more and then reads on from offset 1, and a sysctl file under
     * /proc/sys answers only a read that starts at offset 0 (any later offset is EOF), which left
     * {@code net.core.rmem_max: 4}. One large first read at offset 0, then on to EOF, gets the whole value of a
     * sysctl and every line of a seq_file such as /proc/net/snmp.
     */
    public static String read(String path) {
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] chunk = new byte[READ_CHUNK_BYTES];
            for (int n; (n = in.read(chunk)) >= 0; ) {
                out.write(chunk, 0, n);
            }
            return out.toString(StandardCharsets.UTF_8);
        } catch (IOException | SecurityException e) {
            return "";
        }
    }

    static List<String> lines(String path) {
        return read(path).lines().toList();
    }
}
