package io.lossprobe.core.counters;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The drop counter of the egress queue (the root qdisc) of the interface a target is routed through: packets the
 * sending host dropped before they left it, because a shaper's, fq's or the txqueuelen's queue was full. Linux
 * shows qdisc statistics only through netlink, so this runs iproute2 ({@code ip route get}, {@code tc -s qdisc}):
 * a fork and a netlink dump of a few milliseconds, for the engine's thread, never for a send or receive loop.
 *
 * <p>The counter counts packets as the queue saw them: a UDP GSO send is one packet there, whatever the number of
 * datagrams it carries (unless the qdisc segments it, as tbf does with a burst smaller than the packet).
 */
public final class EgressQdisc {
    /** No interface known (a remote sender, or iproute2 missing): nothing to read. */
    public static final EgressQdisc NONE = new EgressQdisc(null, false);
    private static final long COMMAND_TIMEOUT_MS = 2_000;

    private final String device;
    private final boolean queueing;

    private EgressQdisc(String device, boolean queueing) {
        this.device = device;
        this.queueing = queueing;
    }

    /**
     * The egress queue towards {@code host} on this host, found once (route and qdisc kind); {@link #NONE} when
     * the route or the qdisc cannot be read.
     */
    public static EgressQdisc forTarget(String host) {
        try {
            String address = InetAddress.getByName(host).getHostAddress();
            String device = parseRouteDevice(run(List.of("ip", "-o", "route", "get", address)));
            if (device == null) {
                return NONE;
            }
            String qdisc = run(showCommand(device));
            if (parseRootDrops(qdisc) < 0) {
                return NONE;
            }
            // noqueue (loopback, a veth or bridge left at its default) has no queue to drop from: no need to
            // fork tc twice a step for a counter that stays 0.
            return new EgressQdisc(device, !"noqueue".equals(parseRootKind(qdisc)));
        } catch (IOException e) {
            return NONE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return NONE;
        }
    }

    /** The interface the target is routed through; null for {@link #NONE}. */
    public String device() {
        return device;
    }

    /** The key a step's host counters report this counter's delta under: {@code qdisc.eth0.drops}. */
    public String counterKey() {
        return "qdisc." + device + ".drops";
    }

    /**
     * Packets the root qdisc has dropped since it was created: 0 for a device without a queue, -1 when unknown
     * ({@link #NONE}, or tc failed). A delta over a step is meaningful only if the qdisc was not replaced meanwhile
     * (a replaced qdisc starts from 0 again; a negative delta says so).
     */
    public long drops() {
        if (device == null) {
            return -1;
        }
        if (!queueing) {
            return 0;
        }
        try {
            return parseRootDrops(run(showCommand(device)));
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static List<String> showCommand(String device) {
        return List.of("tc", "-s", "qdisc", "show", "dev", device, "root");
    }

    /** The device in {@code ip -o route get} output ({@code "198.18.0.1 dev eth0 src ..."}); null if none. */
    static String parseRouteDevice(String output) {
        String[] tokens = output.trim().split("\\s+");
        for (int i = 0; i + 1 < tokens.length; i++) {
            if (tokens[i].equals("dev")) {
                return tokens[i + 1];
            }
        }
        return null;
    }

    /** The kind of the root qdisc in {@code tc -s qdisc show} output ({@code "qdisc tbf 8001: root ..."}). */
    static String parseRootKind(String output) {
        String line = rootLine(output);
        if (line == null) {
            return null;
        }
        String[] tokens = line.trim().split("\\s+");
        return tokens.length > 1 ? tokens[1] : null;
    }

    /**
     * The root qdisc's drop count in {@code tc -s qdisc show} output: the {@code (dropped N,} that follows its
     * {@code qdisc ... root} line (for mq the kernel sums its children there). -1 when there is none.
     */
    static long parseRootDrops(String output) {
        String[] lines = output.split("\n");
        boolean inRoot = false;
        for (String line : lines) {
            if (line.startsWith("qdisc ")) {
                if (inRoot) {
                    return -1; // the root's block ended without statistics
                }
                inRoot = isRoot(line);
                continue;
            }
            int at = line.indexOf("(dropped ");
            if (inRoot && at >= 0) {
                int from = at + "(dropped ".length();
                int to = line.indexOf(',', from);
                try {
                    return Long.parseLong(line.substring(from, to < 0 ? line.length() : to).trim());
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }

    private static String rootLine(String output) {
        for (String line : output.split("\n")) {
            if (line.startsWith("qdisc ") && isRoot(line)) {
                return line;
            }
        }
        return null;
    }

    private static boolean isRoot(String qdiscLine) {
        return (" " + qdiscLine + " ").contains(" root ");
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        // Waits before reading: the outputs (one route, one root qdisc) fit a pipe's buffer, and a command that
        // hangs must not hang the engine.
        if (!p.waitFor(COMMAND_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new IOException(command.get(0) + " did not finish");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IOException(command + " failed: " + out.strip());
        }
        return out;
    }
}
