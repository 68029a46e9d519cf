package io.lossprobe.udp;

import io.lossprobe.core.wire.Punch;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where each flow's data goes when its receiver opened the way first ({@code SenderSpec.punched}: a receiver behind
 * a NAT): the address and port of the flow's first punch that verifies ({@link Punch}), arriving on the flow's own
 * socket (or on the one socket of every flow) from the target's address. Anything else is ignored: a datagram that
 * is no punch of this run's pass, one for another flow or socket, one from another address (so a punch replayed
 * from a spoofed source cannot point the sender at a third host), and every punch after a flow's first.
 */
final class PunchedDestinations {
    private final Punch punch;
    private final InetAddress from;
    private final InetSocketAddress[] learned;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private long ignored;

    PunchedDestinations(Punch punch, InetAddress from, int flows) {
        this.punch = punch;
        this.from = from;
        this.learned = new InetSocketAddress[flows];
    }

    /**
     * A datagram that arrived on flow {@code socketFlow}'s socket (-1: the socket of every flow) from
     * {@code source}; returns the flow it set the destination of, or -1 when it set none.
     */
    int offer(int socketFlow, byte[] datagram, int length, InetSocketAddress source) {
        int flow = punch.flowOf(datagram, 0, length);
        lock.lock();
        try {
            if (flow < 0 || (socketFlow >= 0 && flow != socketFlow) || !sameHost(source) || learned[flow] != null) {
                ignored++;
                return -1;
            }
            learned[flow] = source;
            changed.signalAll();
            return flow;
        } finally {
            lock.unlock();
        }
    }

    private boolean sameHost(InetSocketAddress source) {
        InetAddress a = source.getAddress();
        if (a == null) {
            return false;
        }
        if (a instanceof java.net.Inet6Address && from instanceof java.net.Inet4Address) {
            byte[] b = a.getAddress(); // an IPv4 host seen on a dual-stack socket: ::ffff:a.b.c.d
            boolean mapped = true;
            for (int i = 0; i < 10; i++) {
                mapped &= b[i] == 0;
            }
            mapped &= b[10] == (byte) 0xFF && b[11] == (byte) 0xFF;
            return mapped && java.util.Arrays.equals(java.util.Arrays.copyOfRange(b, 12, 16), from.getAddress());
        }
        return a.equals(from);
    }

    /** Flow {@code flow}'s destination, null while it has none. */
    InetSocketAddress of(int flow) {
        lock.lock();
        try {
            return learned[flow];
        } finally {
            lock.unlock();
        }
    }

    /** Datagrams ignored so far. */
    long ignored() {
        lock.lock();
        try {
            return ignored;
        } finally {
            lock.unlock();
        }
    }

    /** The flows still without a destination. */
    int[] missing() {
        lock.lock();
        try {
            return java.util.stream.IntStream.range(0, learned.length).filter(i -> learned[i] == null).toArray();
        } finally {
            lock.unlock();
        }
    }

    /** Waits until every flow has a destination or {@code timeoutNs} passed; returns the flows without one. */
    int[] await(long timeoutNs) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNs;
        lock.lock();
        try {
            while (missing().length > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                changed.awaitNanos(left);
            }
            return missing();
        } finally {
            lock.unlock();
        }
    }

    /** The source address a native read wrote into {@code from} (family, port, address bytes). */
    static InetSocketAddress sourceOf(java.nio.ByteBuffer from) throws java.net.UnknownHostException {
        int family = from.getInt(0);
        int port = from.getInt(4);
        byte[] address = new byte[family == 2 ? 4 : 16];
        for (int i = 0; i < address.length; i++) {
            address[i] = from.get(8 + i);
        }
        return new InetSocketAddress(InetAddress.getByAddress(address), port);
    }
}
