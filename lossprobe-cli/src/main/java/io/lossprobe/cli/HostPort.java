package io.lossprobe.cli;

import io.lossprobe.core.plan.Addresses;

/** {@code HOST}, {@code HOST:PORT} or {@code [v6]:PORT}, as typed after --target. */
record HostPort(String host, int port) {
    static HostPort parse(String text, int defaultPort) {
        String t = text.strip();
        String host = t;
        String port = null;
        if (t.startsWith("[")) {
            int end = t.indexOf(']');
            if (end < 0) {
                throw new IllegalArgumentException("--target '" + text + "': missing ']'");
            }
            host = t.substring(1, end);
            if (t.length() > end + 1) {
                if (t.charAt(end + 1) != ':') {
                    throw new IllegalArgumentException("--target '" + text + "' is not HOST[:PORT]");
                }
                port = t.substring(end + 2);
            }
        } else if (t.indexOf(':') >= 0 && t.indexOf(':') == t.lastIndexOf(':')) {
            host = t.substring(0, t.indexOf(':'));
            port = t.substring(t.indexOf(':') + 1);
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("--target '" + text + "' has no host");
        }
        int p = defaultPort;
        if (port != null) {
            try {
                p = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                p = -1;
            }
            if (p < 1 || p > 65535) {
                throw new IllegalArgumentException("--target '" + text + "': port must be between 1 and 65535");
            }
        }
        return new HostPort(host, p);
    }

    /** {@code host:port}, with an IPv6 address in brackets ({@code [::1]:7400}): {@link Addresses#hostPort}. */
    static String format(String host, int port) {
        return Addresses.hostPort(host, port);
    }

    @Override
    public String toString() {
        return format(host, port);
    }
}
