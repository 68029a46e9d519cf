package io.lossprobe.udp;

import io.lossprobe.core.transport.FlowsReached;
import io.lossprobe.core.wire.Punch;
import java.net.InetAddress;
import java.net.InetSocketAddress;
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
    private final FlowsReached reached;
    private long ignored;

    PunchedDestinations(Punch punch, InetAddress from, int flows) {
        this.punch = punch;
        this.from = from;
        this.learned = new InetSocketAddress[flows];
        this.reached = new FlowsReached(flows);
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
        } finally {
            lock.unlock();
        }
        reached.mark(flow); // after the destination is set: whoever awaits it finds it
        return flow;
    }

    private boolean sameHost(InetSocketAddress source) {
        return io.lossprobe.core.plan.Addresses.sameHost(source.getAddress(), from);
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
        return reached.missing();
    }

    /** Waits until every flow has a destination or {@code timeoutNs} passed; returns the flows without one. */
    int[] await(long timeoutNs) throws InterruptedException {
        return reached.await(timeoutNs);
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
