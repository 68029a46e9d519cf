package io.lossprobe.core.plan;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * How lossprobe writes an address wherever it prints one: an IPv6 address in its short form (RFC 5952:
 * {@code 2001:2::11}, never {@code 2001:2:0:0:0:0:0:11}) and in brackets before a port (RFC 3986:
 * {@code [::1]:7400}), so the port stays readable. IPv4 addresses and names are written as they are.
 */
public final class Addresses {
    private Addresses() {
    }

    /**
     * Whether {@code seen} (a peer's address on a socket) is the host {@code expected}: the same address, or, on a
     * dual-stack socket, the IPv4-mapped form ({@code ::ffff:a.b.c.d}) of an expected IPv4 address.
     */
    public static boolean sameHost(InetAddress seen, InetAddress expected) {
        if (seen == null || expected == null) {
            return false;
        }
        if (seen instanceof Inet6Address && expected instanceof java.net.Inet4Address) {
            byte[] b = seen.getAddress();
            boolean mapped = true;
            for (int i = 0; i < 10; i++) {
                mapped &= b[i] == 0;
            }
            mapped &= b[10] == (byte) 0xFF && b[11] == (byte) 0xFF;
            return mapped && java.util.Arrays.equals(java.util.Arrays.copyOfRange(b, 12, 16), expected.getAddress());
        }
        return seen.equals(expected);
    }

    /** A dotted quad of four numbers 0-255 without leading zeros: an IPv4 literal InetAddress cannot mistake. */
    private static final java.util.regex.Pattern IPV4 = java.util.regex.Pattern.compile(
        "((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])");

    /**
     * This host's address on the route to {@code target}, as the kernel picks it (a UDP socket connected there, no
     * datagram sent); the any-address when the kernel names none.
     */
    public static InetAddress localTowards(InetAddress target, int port) throws java.io.IOException {
        try (java.net.DatagramSocket probe = new java.net.DatagramSocket()) {
            probe.connect(new java.net.InetSocketAddress(target, port)); // a SocketException, not unchecked
            return probe.getLocalAddress();
        }
    }

    /**
     * {@code text} as an IPv4 or IPv6 address literal, or null when it is not one. Never asks a resolver: what
     * {@link InetAddress#getByName} would take for a name (a name, and digits that are no address, such as
     * {@code 999.1.1.1}) is null here, and text with a colon is parsed as IPv6 only (no scope).
     */
    public static InetAddress literal(String text) {
        boolean v4 = IPV4.matcher(text).matches();
        if (!v4 && !(text.indexOf(':') >= 0 && text.matches("[0-9a-fA-F:.]+"))) {
            return null;
        }
        try {
            return InetAddress.getByName(text); // a literal: parsed, never looked up
        } catch (UnknownHostException e) {
            return null; // a malformed IPv6 literal
        }
    }

    /**
     * Whether {@code group} carries the local network's own control traffic (IPv4 224.0.0.0/24: all-hosts, routing
     * protocols, mDNS; IPv6 interface- and link-local scope, ff01::/16 and ff02::/16): nothing of lossprobe's joins
     * one, whoever asks.
     */
    public static boolean controlGroup(InetAddress group) {
        return group.isMCLinkLocal() || group.isMCNodeLocal();
    }

    /**
     * {@code text} as the multicast group of transport option {@code key}: an address literal (a name is never
     * looked up: a resolver could answer with a unicast host, and a server must not be made to ask) that is
     * multicast and not one of the local network's control groups ({@link #controlGroup}). Refused with a line that
     * says what is expected; the stripped text otherwise.
     */
    public static String multicastGroup(String key, String text) {
        String t = text.strip();
        InetAddress a = literal(t);
        if (a == null) {
            throw new IllegalArgumentException(key + " must be a multicast address literal (e.g. 239.255.0.1), "
                + "not '" + text + "'");
        }
        if (!a.isMulticastAddress()) {
            throw new IllegalArgumentException(key + " " + t + " is not a multicast address (IPv4 224.0.0.0/4, "
                + "IPv6 ff00::/8; for a test 239.255.0.0/16 or ff15::/16)");
        }
        if (controlGroup(a)) {
            throw new IllegalArgumentException(key + " " + t + " is a link-local control group (224.0.0.0/24, "
                + "ff01::/16, ff02::/16: all-hosts, routing protocols, mDNS), which no probe may join; for a test "
                + "239.255.0.0/16 or ff15::/16");
        }
        return t;
    }

    /** {@code host:port}: {@code 127.0.0.1:7400}, {@code [::1]:7400}, {@code rx.example:7400}. */
    public static String hostPort(String host, int port) {
        String h = text(host);
        return (h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + port;
    }

    /**
     * An address as lossprobe prints it: an IPv6 literal (brackets around it allowed) in RFC 5952's short form, its
     * scope ({@code %eth0}) kept; anything else (IPv4, a name) unchanged. Never resolves a name.
     */
    public static String text(String host) {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (h.indexOf(':') < 0) {
            return h;
        }
        try {
            // A literal with a colon is parsed, never looked up; an IPv4-mapped one comes back as IPv4.
            return text(InetAddress.getByName(h));
        } catch (UnknownHostException | SecurityException e) {
            return h; // not a literal after all: as typed
        }
    }

    /** {@link InetAddress#getHostAddress()}, but IPv6 in RFC 5952's short form. */
    public static String text(InetAddress address) {
        if (!(address instanceof Inet6Address v6)) {
            return address.getHostAddress();
        }
        String full = v6.getHostAddress();
        int percent = full.indexOf('%');
        return shortForm(v6.getAddress()) + (percent >= 0 ? full.substring(percent) : "");
    }

    /** Eight groups in lower-case hex without leading zeros; the first longest run of two or more zeros is "::". */
    static String shortForm(byte[] a) {
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = ((a[2 * i] & 0xff) << 8) | (a[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLength = 1; // a single zero group is not shortened (RFC 5952 4.2.2)
        for (int i = 0; i < 8; ) {
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLength - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }
}
