package io.lossprobe.cli;

import io.lossprobe.core.plan.Addresses;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * {@code run --multicast GROUP --receiver HOST ...}: raw UDP to a multicast group from this host, received by
 * several {@code lossprobe serve}s that each join it (docs/multicast.md). Checked here, before any traffic; the UDP
 * transport reads the group, TTL and interface as its options {@code udp.group}, {@code udp.ttl} and
 * {@code udp.interface}. Or {@code run --mdc --receiver HOST ...}: Aeron's multi-destination-cast, a unicast copy of
 * every flow to each receiver, which asks this host for it ({@code aeron.mdc}, the address this host reaches the
 * receivers from).
 */
final class MulticastOptions {
    @Option(names = "--multicast", paramLabel = "GROUP",
        description = "Send every flow to multicast GROUP (an address literal: 239.255.0.1) on the flow's port, raw "
            + "UDP or Aeron (whose group ends in an odd byte); every --receiver joins it and is accounted on its "
            + "own. See docs/multicast.md.")
    String group;

    @Option(names = "--mdc",
        description = "Aeron multi-destination-cast instead of a group: every flow's publication sends a unicast "
            + "copy of each frame to every --receiver, which asks this host for it (control-mode=dynamic); flow "
            + "control as with a group (-X aeron.flowControl). With --transport aeron. See docs/multicast.md.")
    boolean mdc;

    @Option(names = "--receiver", paramLabel = "HOST[:PORT]",
        description = "With --multicast or --mdc: a 'lossprobe serve' that joins the group (or asks for its copy) "
            + "and receives (control port 7400 unless given); repeat it for each receiver.")
    List<String> receivers;

    @Option(names = "--source", paramLabel = "ADDR",
        description = "With --multicast: source-specific multicast (SSM): this host sends from ADDR (one of its "
            + "addresses) and every receiver joins the group for ADDR only (IGMPv3 / MLDv2 source joins). Default: "
            + "any source.")
    String source;

    @Option(names = "--ttl", paramLabel = "N",
        description = "With --multicast: the datagrams' TTL, 1-255. Default: 1 (they stay on the link).")
    Integer ttl;

    @Option(names = "--interface", paramLabel = "NAME",
        description = "With --multicast: the interface this host sends on (e.g. eth0). Default: the route to the "
            + "group's.")
    String sendInterface;

    /** Whether this is a run to many receivers: a group or multi-destination-cast. */
    boolean given() {
        return group != null || mdc;
    }

    /** Refuses what cannot work, each with one line (exit 2). */
    void check(CommandLine cl) {
        if (group != null && mdc) {
            throw new CommandLine.ParameterException(cl, "--multicast and --mdc: a run sends to a group or by "
                + "multi-destination-cast, not both");
        }
        String groupOnly = ttl != null ? "--ttl" : source != null ? "--source" : sendInterface != null
            ? "--interface" : null;
        if (!given() || mdc) {
            String stray = !given() && receivers != null ? "--receiver" : groupOnly;
            if (stray != null) {
                throw new CommandLine.ParameterException(cl, stray + " goes with --multicast GROUP"
                    + (stray.equals("--receiver") ? " or --mdc" : mdc ? " (--mdc sends unicast copies)" : ""));
            }
            if (!given()) {
                return;
            }
        } else {
            groupAddress(cl, group);
        }
        if (receivers == null || receivers.isEmpty()) {
            throw new CommandLine.ParameterException(cl, (mdc ? "--mdc" : "--multicast") + " needs its receivers: "
                + "--receiver HOST for each 'lossprobe serve' that is to " + (mdc ? "take a copy" : "join " + group));
        }
        Set<String> seen = new HashSet<>();
        for (String r : receivers) {
            if (!seen.add(HostPort.parse(r, io.lossprobe.control.ControlClient.DEFAULT_PORT).toString())) {
                throw new CommandLine.ParameterException(cl, "--receiver " + r + " is given twice");
            }
        }
        if (source != null) {
            sourceAddress(cl, source);
        }
        if (ttl != null && (ttl < 1 || ttl > 255)) {
            throw new CommandLine.ParameterException(cl, "--ttl must be 1 to 255, not " + ttl);
        }
        if (sendInterface != null && !sendInterface.matches("[A-Za-z0-9_.:@-]{1,15}")) {
            throw new CommandLine.ParameterException(cl, "--interface must be an interface name (eth0), not '"
                + sendInterface + "'");
        }
    }

    /**
     * The group, which must be an address literal (a name is never looked up: it could answer with a unicast host)
     * and multicast.
     */
    static InetAddress groupAddress(CommandLine cl, String text) {
        InetAddress a = Addresses.literal(text);
        if (a == null) {
            throw new CommandLine.ParameterException(cl, "--multicast takes a group address (e.g. 239.255.0.1), "
                + "not '" + text + "'");
        }
        if (!a.isMulticastAddress()) {
            throw new CommandLine.ParameterException(cl, "--multicast " + text + " is not a multicast group "
                + "(IPv4 224.0.0.0/4, IPv6 ff00::/8; for a test use 239.255.0.0/16)");
        }
        if (Addresses.controlGroup(a)) {
            throw new CommandLine.ParameterException(cl, "--multicast " + text + " is a link-local control group "
                + "(224.0.0.0/24, ff01::/16, ff02::/16), which the serves refuse to join; for a test use "
                + "239.255.0.0/16");
        }
        return a;
    }

    /**
     * Aeron's rule for a multicast group (1.51, {@code UdpChannel}): data goes to the group, whose last byte must be
     * odd, and status messages and NAKs to the next address, its control group. Refused before any traffic.
     */
    void checkAeronGroup(CommandLine cl) {
        byte[] b = Addresses.literal(group).getAddress();
        if ((b[b.length - 1] & 1) == 0) {
            throw new CommandLine.ParameterException(cl, "--multicast " + group + ": an Aeron multicast group ends "
                + "in an odd byte (Aeron sends the receivers' status messages and NAKs to the next address); e.g. "
                + "239.255.0.1, whose control group is 239.255.0.2");
        }
    }

    /** The SSM source: a unicast address literal (never a name: the serves join for exactly this one). */
    static InetAddress sourceAddress(CommandLine cl, String text) {
        InetAddress a = Addresses.literal(text);
        if (a == null || a.isMulticastAddress() || a.isAnyLocalAddress()) {
            throw new CommandLine.ParameterException(cl, "--source takes this host's sending address (e.g. "
                + "198.18.0.11), not '" + text + "'");
        }
        return a;
    }

    /**
     * After the transport's own refusals (Aeron has no source-specific join): the SSM source must be one of this
     * host's addresses, of the group's family.
     */
    void checkLocalSource(CommandLine cl) {
        if (source != null) {
            localSource(cl, sourceAddress(cl, source));
        }
    }

    /** The SSM source, which this host's datagrams leave from: one of its own addresses. */
    private void localSource(CommandLine cl, InetAddress a) {
        boolean here;
        try {
            here = java.net.NetworkInterface.getByInetAddress(a) != null;
        } catch (java.net.SocketException e) {
            here = false;
        }
        if (!here) {
            throw new CommandLine.ParameterException(cl, "--source " + source + " is not an address of this host: "
                + "the group's datagrams leave from it, and the receivers take them from it only");
        }
        if ((a instanceof java.net.Inet6Address) != (Addresses.literal(group) instanceof java.net.Inet6Address)) {
            throw new CommandLine.ParameterException(cl, "--source " + source + " and --multicast " + group
                + " are of two address families");
        }
    }

    /** The receivers as typed, each with its control port. */
    List<HostPort> receivers() {
        List<HostPort> out = new ArrayList<>();
        for (String r : receivers) {
            out.add(HostPort.parse(r, io.lossprobe.control.ControlClient.DEFAULT_PORT));
        }
        return out;
    }

    /** The transport options {@code --multicast} and {@code --mdc} set, which {@code -X} may not: each to its flag. */
    static final Map<String, String> SET_BY = Map.of("udp.group", "--multicast GROUP", "aeron.group",
        "--multicast GROUP", "aeron.mdc", "--mdc", "aeron.mdcReceivers", "--mdc");

    /** The transports a multicast run can use: raw UDP and Aeron. */
    static final List<String> TRANSPORTS = List.of("udp", "aeron");

    /**
     * {@code --mdc}: the address of this host that the first receiver is reached from (the kernel's route lookup,
     * no datagram sent), where every receiver sends its status messages; the run checks that it reached each serve
     * from this address too.
     */
    String mdcAddress(CommandLine cl) {
        HostPort first = receivers().get(0);
        try {
            InetAddress local = Addresses.localTowards(InetAddress.getByName(first.host()), first.port());
            if (local == null || local.isAnyLocalAddress()) {
                throw new CommandLine.ParameterException(cl, "--mdc: no route from this host to " + first);
            }
            return local.getHostAddress();
        } catch (java.io.IOException e) {
            throw new CommandLine.ParameterException(cl, "--mdc: cannot reach " + first + ": " + e.getMessage());
        }
    }

    /**
     * {@code options} with the multicast options of each of {@code transports} (udp: {@code udp.group},
     * {@code udp.source}, {@code udp.ttl}, {@code udp.interface}; aeron: the same under {@code aeron.}, no source)
     * set from these.
     */
    Map<String, String> transportOptions(Map<String, String> options, List<String> transports) {
        Map<String, String> out = new HashMap<>(options);
        if (mdc) {
            return out;
        }
        for (String t : TRANSPORTS) {
            if (!transports.contains(t)) {
                continue;
            }
            out.put(t + ".group", group);
            if (source != null && t.equals("udp")) {
                out.put("udp.source", source);
            }
            if (ttl != null) {
                out.put(t + ".ttl", Integer.toString(ttl));
            }
            if (sendInterface != null) {
                out.put(t + ".interface", sendInterface);
            }
        }
        return out;
    }
}
