package io.lossprobe.control;

import java.net.InetAddress;
import java.net.Socket;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Connections that have not authenticated yet, held apart from sessions: at most {@code perAddress} from one
 * address and {@code total} in all. A connection beyond either cap is admitted by closing the oldest one that
 * cap counts (that address's, or anyone's), so holding connections open without authenticating locks nobody out:
 * a newcomer always gets in, and locking others out takes opening connections faster than a handshake completes,
 * a flood rather than a trickle. Every connection is also bounded by the handshake deadline.
 */
final class PreAuthGate {
    private final int perAddress;
    private final int total;
    /** Oldest first. */
    private final Deque<Ticket> pending = new ArrayDeque<>();
    private final Map<InetAddress, Integer> perSource = new HashMap<>();
    private long evicted;

    PreAuthGate(int perAddress, int total) {
        this.perAddress = perAddress;
        this.total = total;
    }

    /** A connection's place at the gate; {@link #leave} when it authenticated or ended. */
    static final class Ticket {
        final Socket socket;
        boolean inside = true;
        /** Closed by the gate to make room for a newer connection. */
        volatile boolean evicted;

        Ticket(Socket socket) {
            this.socket = socket;
        }

        /** Whom the cap per address counts it for (an accepted socket keeps its peer's address after closing). */
        InetAddress address() {
            return socket.getInetAddress();
        }
    }

    /** Admits {@code socket}, closing the oldest connection of the cap it would exceed. */
    synchronized Ticket admit(Socket socket) {
        InetAddress address = socket.getInetAddress();
        if (perSource.getOrDefault(address, 0) >= perAddress) {
            evictOldest(address);
        } else if (pending.size() >= total) {
            evictOldest(null);
        }
        Ticket t = new Ticket(socket);
        pending.addLast(t);
        perSource.merge(address, 1, Integer::sum);
        return t;
    }

    private void evictOldest(InetAddress from) {
        Iterator<Ticket> it = pending.iterator();
        while (it.hasNext()) {
            Ticket t = it.next();
            if (from == null || t.address().equals(from)) {
                it.remove();
                out(t);
                t.evicted = true;
                evicted++;
                try {
                    t.socket.close(); // its handshake thread fails its read and ends
                } catch (java.io.IOException e) {
                    // Closing is best effort.
                }
                return;
            }
        }
    }

    /** The connection authenticated, failed or ended: it no longer counts. Idempotent. */
    synchronized void leave(Ticket t) {
        if (t.inside) {
            pending.remove(t);
            out(t);
        }
    }

    private void out(Ticket t) {
        t.inside = false;
        perSource.computeIfPresent(t.address(), (a, n) -> n <= 1 ? null : n - 1);
    }

    synchronized int size() {
        return pending.size();
    }

    /** Connections closed to make room for newer ones, since the start. */
    synchronized long evicted() {
        return evicted;
    }
}
