package io.lossprobe.aeron;

import io.aeron.ChannelUriStringBuilder;
import io.lossprobe.core.plan.Addresses;
import io.lossprobe.core.transport.TransportOption;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Collections;
import java.util.Map;

/**
 * Aeron multicast ({@code aeron.group}, docs/multicast.md): every flow's publication sends to the group on the flow's
 * port ({@code aeron:udp?endpoint=GROUP:port|interface=ADDR|ttl=N|fc=...}) and every receiver subscribes on the group
 * on the interface of its bind address. Aeron (1.51, {@code UdpChannel.getMulticastControlAddress}) sends data to the
 * group, whose last byte must be odd, and the receivers' status messages and NAKs to the next address (its control
 * group, last byte + 1), which the publication joins.
 *
 * <p>Or Aeron's multi-destination-cast ({@code aeron.mdc}): every flow's publication has a control socket on the
 * sender's address and the flow's port ({@code aeron:udp?control=SENDER:port|control-mode=dynamic|fc=...}), each
 * receiver subscribes on its own address with {@code control=SENDER:port} and sends its status messages there, and
 * the publication sends a unicast copy of every frame to each receiver it heard from. The same flow-control
 * strategies choose the pace. The sender takes control frames only from the receivers' addresses
 * ({@code aeron.mdcReceivers}): a status message from anyone else would add them as a destination.
 *
 * @param group       the data group, a multicast literal with an odd last byte; null for MDC
 * @param mdcControl  {@code aeron.mdc}: the sender's address, where MDC receivers send their status messages; null
 *                    for a group
 * @param mdcReceivers {@code aeron.mdcReceivers}: the only addresses an MDC publication takes control frames from
 *                    (the sender's side; empty on a receiver's)
 * @param ttl         {@code aeron.ttl}: the multicast TTL of the publications' datagrams
 * @param interfaceName {@code aeron.interface}: the interface the publications send on (this host only), or null for
 *                    the one on the route to the group
 * @param flowControl {@code aeron.flowControl}: max, min or tagged, Aeron's multicast flow-control strategies
 * @param groupTag    {@code aeron.groupTag}: the receivers' group tag ({@code gtag}), which tagged flow control
 *                    counts; null for none
 */
record Multicast(String group, String mdcControl, java.util.Set<InetAddress> mdcReceivers, int ttl,
                 String interfaceName, String flowControl, Long groupTag) {
    static final TransportOption<String> GROUP = TransportOption.text("aeron.group", "none (unicast)",
        "publish every flow to this multicast group (an address literal whose last byte is odd: Aeron's control "
            + "group is the next address) on the flow's port; the receivers subscribe on it (docs/multicast.md)")
        .parsedBy("a multicast address literal with an odd last byte (239.255.0.1)", Multicast::parseGroup);
    static final TransportOption<String> MDC = TransportOption.text("aeron.mdc", "none",
        "multi-destination-cast from the sender at this address (set by run --mdc): each flow's publication has its "
            + "control socket there on the flow's port, and every receiver asks it for a copy (docs/multicast.md)")
        .parsedBy("a unicast address literal (198.18.0.11)", Multicast::parseUnicast);
    static final TransportOption<String> MDC_RECEIVERS = TransportOption.text("aeron.mdcReceivers", "none",
        "with aeron.mdc, on the sender: the receivers' addresses, the only ones its publications take status "
            + "messages and NAKs from (set by run --mdc)").localOnly();
    static final TransportOption<Long> TTL = TransportOption.number("aeron.ttl", 1, 1, 255,
        "with aeron.group: the multicast TTL of the publications' datagrams; 1 keeps them on the link");
    static final TransportOption<String> INTERFACE = TransportOption.text("aeron.interface",
        "the interface of the route to the group",
        "with aeron.group: the interface (its name, e.g. eth0) the publications send on").localOnly();
    static final TransportOption<String> FLOW_CONTROL = TransportOption.choice("aeron.flowControl", "max",
        "with aeron.group or aeron.mdc: the publications' flow control: max (the fastest receiver sets the pace, a "
            + "slower one is left behind), min (the slowest sets it), tagged (the slowest of those with "
            + "aeron.groupTag)",
        "max", "min", "tagged");
    static final TransportOption<Long> GROUP_TAG = TransportOption.number("aeron.groupTag", 0, Long.MIN_VALUE,
        Long.MAX_VALUE, "with aeron.group or aeron.mdc: the receivers' group tag (gtag), the group "
            + "aeron.flowControl=tagged counts");

    /** Whether {@code options} ask for a multicast group or MDC, with no check. */
    static boolean given(Map<String, String> options) {
        return GROUP.read(options) != null || MDC.read(options) != null;
    }

    /** The multicast settings of {@code options}, or null without {@code aeron.group}; bad combinations refused. */
    static Multicast parse(Map<String, String> options) {
        String group = GROUP.read(options);
        String mdc = MDC.read(options);
        String flowControl = FLOW_CONTROL.read(options);
        Long tag = options.containsKey(GROUP_TAG.key()) ? GROUP_TAG.read(options) : null;
        if (group == null && mdc == null) {
            for (TransportOption<?> o : java.util.List.of(TTL, INTERFACE, FLOW_CONTROL, GROUP_TAG, MDC_RECEIVERS)) {
                if (options.containsKey(o.key())) {
                    throw new IllegalArgumentException(o.key() + " goes with a multicast group (run --multicast "
                        + "GROUP --transport aeron) or multi-destination-cast (run --mdc --transport aeron)");
                }
            }
            return null;
        }
        if (group != null && mdc != null) {
            throw new IllegalArgumentException("aeron.group and aeron.mdc: a run is multicast or "
                + "multi-destination-cast, not both");
        }
        if (flowControl.equals("tagged") && tag == null) {
            throw new IllegalArgumentException("aeron.flowControl=tagged needs the receivers' group tag: "
                + "-X aeron.groupTag=N");
        }
        if (mdc != null) {
            for (TransportOption<?> o : java.util.List.of(TTL, INTERFACE)) {
                if (options.containsKey(o.key())) {
                    throw new IllegalArgumentException(o.key() + " goes with a multicast group: "
                        + "multi-destination-cast sends unicast copies");
                }
            }
            return new Multicast(null, Addresses.literal(mdc).getHostAddress(), receivers(MDC_RECEIVERS.read(options)),
                1, null, flowControl, tag);
        }
        if (options.containsKey(MDC_RECEIVERS.key())) {
            throw new IllegalArgumentException("aeron.mdcReceivers goes with aeron.mdc");
        }
        return new Multicast(Addresses.literal(group).getHostAddress(), null, java.util.Set.of(),
            TTL.read(options).intValue(), INTERFACE.read(options), flowControl, tag);
    }

    /** {@code aeron.mdcReceivers}: comma-separated unicast address literals, or none. */
    private static java.util.Set<InetAddress> receivers(String text) {
        java.util.Set<InetAddress> out = new java.util.LinkedHashSet<>();
        if (text != null) {
            for (String part : text.split(",", -1)) {
                out.add(Addresses.literal(parseUnicast(part.trim())));
            }
        }
        return java.util.Collections.unmodifiableSet(out);
    }

    /** A unicast address literal (never a name, multicast or the any-address). */
    static String parseUnicast(String text) {
        InetAddress a = Addresses.literal(text);
        if (a == null || a.isMulticastAddress() || a.isAnyLocalAddress()) {
            throw new IllegalArgumentException("'" + text + "' is not a unicast address literal");
        }
        return text;
    }

    /** Whether this is multi-destination-cast (no group). */
    boolean mdc() {
        return mdcControl != null;
    }

    /** Where the receivers take the flow on {@code port} from, for messages: the group, or the MDC sender. */
    String source(int port) {
        return mdc() ? "the multi-destination-cast sender at " + AeronOptions.endpoint(mdcControl, port)
            : AeronOptions.endpoint(group, port);
    }

    /** A multicast literal (as {@link Addresses#multicastGroup}) whose last byte is odd, as Aeron's data groups. */
    static String parseGroup(String text) {
        String t = Addresses.multicastGroup(GROUP.key(), text);
        byte[] b = Addresses.literal(t).getAddress();
        if ((b[b.length - 1] & 1) == 0) {
            b[b.length - 1]++;
            String next;
            try {
                next = InetAddress.getByAddress(b).getHostAddress();
            } catch (java.net.UnknownHostException e) {
                throw new IllegalStateException(e);
            }
            throw new IllegalArgumentException("aeron.group " + t + ": Aeron's multicast data group ends in an odd "
                + "byte (its status messages and NAKs go to the next address, the control group): e.g. " + next);
        }
        return t;
    }

    /** Aeron's control group of {@link #group}: its last byte plus one. */
    String controlGroup() {
        byte[] b = Addresses.literal(group).getAddress();
        b[b.length - 1]++;
        try {
            return InetAddress.getByAddress(b).getHostAddress();
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Aeron's {@code fc} value: the strategy, with the group tag for tagged. */
    String fc() {
        return flowControl.equals("tagged") ? "tagged,g:" + groupTag : flowControl;
    }

    /**
     * A flow's publication to the group on {@code port}, sending on {@link #sendAddress}; with MDC, its control socket
     * on {@link #mdcControl} and {@code port}, sending to every receiver whose status messages arrive there.
     */
    ChannelUriStringBuilder publication(ChannelUriStringBuilder b, int port, String sourceHost) {
        if (mdc()) {
            return b.controlEndpoint(AeronOptions.endpoint(mdcControl, port))
                .controlMode(io.aeron.CommonContext.MDC_CONTROL_MODE_DYNAMIC).flowControl(fc());
        }
        String on = sourceHost != null ? sourceHost : sendAddress();
        return b.endpoint(AeronOptions.endpoint(group, port)).networkInterface(on).ttl(ttl).flowControl(fc());
    }

    /**
     * A flow's subscription on the group and {@code port}, joined on the interface holding {@code bindAddress}; with
     * MDC, on {@code bindAddress} and {@code port}, its status messages sent to the sender's control socket.
     */
    ChannelUriStringBuilder subscription(ChannelUriStringBuilder b, int port, String bindAddress) {
        InetAddress bind = Addresses.literal(bindAddress);
        if (bind == null || bind.isAnyLocalAddress()) {
            throw new IllegalArgumentException("an Aeron " + (mdc() ? "multi-destination-cast receiver sends its "
                + "status messages from" : "multicast receiver joins " + group + " on the interface of") + " its bind "
                + "address: give serve --bind an address" + (mdc() ? "" : " of that interface") + ", not '"
                + bindAddress + "'");
        }
        if (mdc()) {
            b.endpoint(AeronOptions.endpoint(bind.getHostAddress(), port))
                .controlEndpoint(AeronOptions.endpoint(mdcControl, port));
        } else {
            b.endpoint(AeronOptions.endpoint(group, port)).networkInterface(bind.getHostAddress());
        }
        if (groupTag != null) {
            b.groupTag(groupTag);
        }
        return b;
    }

    /**
     * The address the publications send from: {@code aeron.interface}'s address of the group's family, else this
     * host's address on the route to the group. Refused with no route (Aeron would pick an interface itself).
     */
    String sendAddress() {
        boolean v4 = Addresses.literal(group) instanceof java.net.Inet4Address;
        if (interfaceName != null) {
            try {
                NetworkInterface i = NetworkInterface.getByName(interfaceName);
                if (i == null || !i.isUp() || !i.supportsMulticast()) {
                    throw new IllegalArgumentException("aeron.interface: no interface '" + interfaceName
                        + "' on this host that is up and multicast-capable");
                }
                for (InetAddress a : Collections.list(i.getInetAddresses())) {
                    if (a instanceof java.net.Inet4Address == v4 && !a.isLinkLocalAddress()) {
                        return a.getHostAddress();
                    }
                }
                throw new IllegalArgumentException("aeron.interface " + interfaceName + " has no address of "
                    + group + "'s family");
            } catch (SocketException e) {
                throw new IllegalArgumentException("aeron.interface " + interfaceName + ": " + e.getMessage(), e);
            }
        }
        String local = AeronSender.localAddressTowards(group);
        if (Addresses.literal(local) == null || Addresses.literal(local).isAnyLocalAddress()) {
            throw new IllegalArgumentException("no route to " + group + " on this host: add one (ip route add "
                + (v4 ? "239.255.0.0/16" : "ff15::/16") + " dev eth0) or give --interface NAME");
        }
        return local;
    }
}
