package io.lossprobe.cli;

import io.lossprobe.analysis.MeshResult.Host;
import io.lossprobe.control.ControlClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The hosts of a mesh: lines of a file, {@code --host} flags, or every address behind one DNS name (a Kubernetes
 * headless Service). A host is {@code NAME=ADDRESS[:PORT]}, {@code NAME ADDRESS[:PORT]} (in a file) or
 * {@code ADDRESS[:PORT]} (named by its address); the port is serve's control port.
 */
final class MeshHosts {
    private MeshHosts() {
    }

    /** One host as written after {@code --host} or on a line of a host file. */
    static Host parse(String text) {
        String t = text.strip();
        String name = null;
        String where = t;
        int eq = t.indexOf('=');
        String[] words = t.split("\\s+");
        if (eq > 0) {
            name = t.substring(0, eq).strip();
            where = t.substring(eq + 1).strip();
        } else if (words.length == 2) {
            name = words[0];
            where = words[1];
        } else if (words.length > 2) {
            throw new IllegalArgumentException("host '" + t + "' is not NAME ADDRESS[:PORT]");
        }
        HostPort hp = HostPort.parse(where, ControlClient.DEFAULT_PORT);
        if (name == null) {
            name = hp.host();
        }
        if (name.isEmpty() || !name.matches("[A-Za-z0-9_.:\\-\\[\\]]+")) {
            throw new IllegalArgumentException("host name '" + name + "' may hold only letters, digits and . _ - :");
        }
        return new Host(name, hp.host(), hp.port());
    }

    /** The hosts of a file: one a line, {@code #} starts a comment, blank lines are skipped. */
    static List<Host> read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("cannot read host list " + file + ": no such file");
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read host list " + file + ": " + e.getMessage());
        }
        List<Host> hosts = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int hash = line.indexOf('#');
            String content = (hash >= 0 ? line.substring(0, hash) : line).strip();
            if (content.isEmpty()) {
                continue;
            }
            try {
                hosts.add(parse(content));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": " + e.getMessage());
            }
        }
        return hosts;
    }

    /**
     * Every address {@code NAME[:PORT]} resolves to (in the family of {@code -4} / {@code -6}), sorted so that every
     * host that resolves it gets the same list in the same order (a headless Service answers in any order), each
     * named by its address.
     */
    static List<Host> resolve(String nameAndPort, AddressFamilyOption family) {
        HostPort hp = HostPort.parse(nameAndPort, ControlClient.DEFAULT_PORT);
        return family.resolveAll(hp.host(), "--hosts-dns").stream().sorted()
            .map(a -> new Host(a, a, hp.port())).toList();
    }

    /**
     * With {@code -4} / {@code -6}, each host's address resolved once to one of that family (a name with both takes
     * the family chosen; one with none is refused); without, the hosts as listed.
     */
    static List<Host> inFamily(List<Host> hosts, AddressFamilyOption family) {
        if (!family.given()) {
            return hosts;
        }
        return hosts.stream().map(h -> new Host(h.name(), family.resolve(h.address(), "host " + h.name()), h.port()))
            .toList();
    }

    /** Refuses a list with fewer than two hosts or with a name or address twice. */
    static List<Host> check(List<Host> hosts) {
        if (hosts.size() < 2) {
            throw new IllegalArgumentException("a mesh needs at least two hosts (--hosts-file, --host or "
                + "--hosts-dns), got " + hosts.size());
        }
        Set<String> names = new HashSet<>();
        Set<String> addresses = new HashSet<>();
        for (Host h : hosts) {
            if (!names.add(h.name())) {
                throw new IllegalArgumentException("host '" + h.name() + "' is listed twice");
            }
            if (!addresses.add(HostPort.format(h.address(), h.port()))) {
                throw new IllegalArgumentException("address " + HostPort.format(h.address(), h.port())
                    + " is listed twice");
            }
        }
        return List.copyOf(hosts);
    }
}
