package io.lossprobe.cli;

import io.lossprobe.core.plan.Addresses;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * {@code -4} / {@code -6}: the address family every host name of the command resolves to, for a name with both
 * (A and AAAA records); an address of the other family is refused, as is a name with no address of the family
 * (exit 2). Without either, a name takes the first address the system's resolver gives, of either family.
 */
final class AddressFamilyOption {
    @Option(names = "-4", description = "IPv4 only: host names resolve to their IPv4 addresses; an IPv6 address "
        + "is refused. Default: either family, the resolver's first.")
    boolean ipv4;

    @Option(names = "-6", description = "IPv6 only: host names resolve to their IPv6 addresses; an IPv4 address "
        + "is refused.")
    boolean ipv6;

    /** Refuses {@code -4} with {@code -6}. */
    void check(CommandLine cl) {
        if (ipv4 && ipv6) {
            throw new CommandLine.ParameterException(cl, "-4 and -6 exclude each other: give one");
        }
    }

    /** Whether {@code -4} or {@code -6} was given. */
    boolean given() {
        return ipv4 || ipv6;
    }

    /** This host's loopback address in the chosen family: 127.0.0.1, or ::1 with {@code -6}. */
    String loopback() {
        return ipv6 ? "::1" : "127.0.0.1";
    }

    /** Every address of the chosen family: 0.0.0.0, or :: with {@code -6}. */
    String wildcard() {
        return ipv6 ? "::" : "0.0.0.0";
    }

    /** The wildcard address of {@code address}'s family: {@code ::} for an IPv6 literal, else 0.0.0.0. */
    static String wildcardOf(String address) {
        return address.indexOf(':') >= 0 ? "::" : "0.0.0.0";
    }

    /**
     * The first of {@link #resolveAll}: the address {@code host} stands for, as a literal.
     *
     * @param what the option that named it, for the message ({@code --target})
     */
    String resolve(String host, String what) {
        return resolveAll(host, what).get(0);
    }

    /**
     * The addresses of {@code host} in the chosen family, in the resolver's order, as literals (IPv6 in its short
     * form). A literal is its own address.
     *
     * @throws IllegalArgumentException (exit 2) when the name does not resolve, when it has no address of the
     *                                  family, or for a literal of the other family
     */
    List<String> resolveAll(String host, String what) {
        InetAddress[] all;
        try {
            all = InetAddress.getAllByName(host);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown host '" + host + "'" + (what == null ? "" : " (" + what
                + ")"));
        }
        List<InetAddress> admitted = Arrays.stream(all).filter(this::admits).toList();
        if (admitted.isEmpty()) {
            String family = ipv4 ? "IPv4" : "IPv6";
            String flag = ipv4 ? "-4" : "-6";
            String where = what == null ? "" : " (" + what + ")";
            if (isLiteral(host)) {
                throw new IllegalArgumentException(flag + " with the " + (ipv4 ? "IPv6" : "IPv4") + " address "
                    + Addresses.text(host) + where + ": give an " + family + " address or leave " + flag + " out");
            }
            throw new IllegalArgumentException(flag + ": '" + host + "'" + where + " has no " + family
                + " address (it has " + String.join(", ", Arrays.stream(all).map(Addresses::text).toList()) + ")");
        }
        return admitted.stream().map(Addresses::text).distinct().toList();
    }

    /** Whether {@code address} is of the chosen family (any address without {@code -4} / {@code -6}). */
    boolean admits(InetAddress address) {
        return ipv4 ? address instanceof Inet4Address : !ipv6 || address instanceof Inet6Address;
    }

    /** An IPv4 or IPv6 literal, not a name. */
    private static boolean isLiteral(String host) {
        return host.indexOf(':') >= 0 || host.matches("[0-9.]+");
    }
}
