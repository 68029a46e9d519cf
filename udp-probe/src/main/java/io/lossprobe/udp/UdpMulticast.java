package io.lossprobe.udp;

import io.lossprobe.core.plan.Addresses;
import io.lossprobe.core.transport.TransportOption;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Any-source multicast for raw UDP ({@code udp.group}): the senders send each flow to the group on the flow's port
 * (with {@code udp.ttl}, 1 by default, so nothing leaves the link), and every receiver binds each flow's socket to
 * the group and port and joins the group (IP_ADD_MEMBERSHIP) on one interface. A receiver accounts what it got
 * exactly as a unicast one does: the datagrams still carry the run's tag and must come from the sender's address.
 *
 * <p>The receiving interface is {@code udp.interface} when given (this host only: an interface name means nothing to
 * another host), else the one holding the receivers' bind address (a {@code serve --bind ADDR} joins where it was
 * reached), else, bound to the wildcard, the only interface that is up, not loopback and multicast-capable; with
 * none or several of those the receivers refuse to open, before any traffic.
 */
final class UdpMulticast {
    static final TransportOption<String> GROUP = TransportOption.text("udp.group", "none (unicast)",
        "send every flow to this multicast group (an IPv4 or IPv6 address literal) on the flow's port; the receivers "
            + "join it (docs/multicast.md)").parsedBy("a multicast address literal (239.255.0.1, ff15::1)",
        UdpMulticast::parseGroup);
    static final TransportOption<String> SOURCE = TransportOption.text("udp.source", "none (any source)",
        "with udp.group: source-specific multicast, the receivers join the group for this sender's address only "
            + "(IGMPv3 / MLDv2 source joins)").parsedBy("a unicast address literal (198.18.0.11)",
        UdpMulticast::parseSource);
    static final TransportOption<Long> TTL = TransportOption.number("udp.ttl", 1, 1, 255,
        "with udp.group: the multicast TTL (IPv6 hop limit) of the senders' datagrams; 1 keeps them on the link");
    static final TransportOption<String> INTERFACE = TransportOption.text("udp.interface",
        "the interface of the bind address, else the only multicast one",
        "with udp.group: the interface (its name, e.g. eth0) the senders send on and the receivers join on")
        .localOnly();

    private UdpMulticast() {
    }

    /** The group of {@code options}, or null for a unicast run. */
    static InetAddress group(Map<String, String> options) {
        String text = GROUP.read(options);
        return text == null ? null : Addresses.literal(text); // read checked it
    }

    /** A multicast address literal, never a name nor a control group ({@link Addresses#multicastGroup}). */
    static String parseGroup(String text) {
        return Addresses.multicastGroup(GROUP.key(), text);
    }

    /** The sender's address for a source-specific join: a literal, never a name, and not a group. */
    static String parseSource(String text) {
        String t = text.strip();
        InetAddress a = Addresses.literal(t);
        if (a == null || a.isMulticastAddress() || a.isAnyLocalAddress()) {
            throw new IllegalArgumentException("udp.source must be the sender's unicast address literal "
                + "(e.g. 198.18.0.11), not '" + text + "'");
        }
        return t;
    }

    /** The source of a source-specific run, or null (any source). */
    static InetAddress source(Map<String, String> options) {
        String text = SOURCE.read(options);
        return text == null ? null : Addresses.literal(text); // read checked it
    }

    /** A datagram channel of the group's family: a socket of the other family could not join it. */
    static ChannelFactory<Channel> channels(Class<? extends DatagramChannel> type, InetAddress group) {
        SocketProtocolFamily family = group instanceof Inet4Address ? SocketProtocolFamily.INET
            : SocketProtocolFamily.INET6;
        return () -> {
            try {
                return type.getConstructor(SocketProtocolFamily.class).newInstance(family);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot make a " + family + " datagram channel of " + type, e);
            }
        };
    }

    /** The interface the receivers join on (see the class comment); {@link IOException} naming why when none. */
    static NetworkInterface receiveInterface(Map<String, String> options, String bindAddress) throws IOException {
        String named = INTERFACE.read(options);
        if (named != null) {
            return named(named);
        }
        InetAddress bind = InetAddress.getByName(bindAddress);
        if (!bind.isAnyLocalAddress()) {
            NetworkInterface holding = NetworkInterface.getByInetAddress(bind);
            if (holding == null) {
                throw new IOException("no interface holds the bind address " + bindAddress + " to join on");
            }
            return usable(holding, "(it holds the bind address " + bindAddress + ")");
        }
        List<NetworkInterface> candidates = new ArrayList<>();
        for (NetworkInterface i : java.util.Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (i.isUp() && !i.isLoopback() && i.supportsMulticast()) {
                candidates.add(i);
            }
        }
        if (candidates.size() != 1) {
            throw new IOException((candidates.isEmpty() ? "no interface" : candidates.size() + " interfaces")
                + " up and multicast-capable to join on: give udp.interface (-X udp.interface=NAME) or --bind "
                + "an address of the one to use");
        }
        return candidates.get(0);
    }

    /** The interface the senders send on, when one is named; else null (the route to the group decides). */
    static NetworkInterface sendInterface(Map<String, String> options) throws IOException {
        String named = INTERFACE.read(options);
        return named == null ? null : named(named);
    }

    private static NetworkInterface named(String name) throws SocketException {
        NetworkInterface i = NetworkInterface.getByName(name);
        if (i == null) {
            throw new SocketException("no interface '" + name + "' on this host (udp.interface)");
        }
        return usable(i, "(udp.interface)");
    }

    /**
     * {@code i} when it is up and multicast-capable: a join on an interface without multicast would look fine here
     * (Linux takes it) and send no membership report, so no switch that listens for them would forward the group.
     */
    private static NetworkInterface usable(NetworkInterface i, String why) throws SocketException {
        if (!i.isUp() || !i.supportsMulticast()) {
            throw new SocketException("interface '" + i.getName() + "' " + why + " is "
                + (i.isUp() ? "not multicast-capable" : "down") + ": cannot join a group on it");
        }
        return i;
    }

    /**
     * Joins {@code group} on {@code on} with the flow's socket, for {@code source} only when one is given
     * (IP_ADD_SOURCE_MEMBERSHIP), bounded in time.
     */
    static void join(Channel socket, InetAddress group, NetworkInterface on, InetAddress source) throws Exception {
        io.netty.channel.ChannelFuture joined = ((DatagramChannel) socket).joinGroup(group, on, source);
        if (!joined.await(10, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new IOException("joining " + group.getHostAddress() + " on " + on.getName() + " took over 10 s");
        }
        if (!joined.isSuccess()) {
            throw new IOException("cannot join " + group.getHostAddress() + (source == null ? ""
                : " for source " + source.getHostAddress()) + " on " + on.getName() + ": "
                + joined.cause().getMessage(), joined.cause());
        }
    }
}
