package io.lossprobe.udp;

import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.transport.ReceiverEndpoint;
import java.lang.reflect.Proxy;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;

/**
 * Tests whose receivers are plain sockets: a receive side whose only use is {@code SendSide.reachFrom}, each flow's
 * punch sent from its own socket as lossprobe's receivers send theirs.
 */
final class PunchingSockets {
    private PunchingSockets() {
    }

    static ReceiveSide of(DatagramSocket... flows) {
        ReceiverEndpoint endpoint = (ReceiverEndpoint) Proxy.newProxyInstance(PunchingSockets.class.getClassLoader(),
            new Class<?>[] {ReceiverEndpoint.class}, (proxy, method, args) -> {
                if (!method.getName().equals("punch")) {
                    throw new UnsupportedOperationException(method.getName());
                }
                byte[] datagram = (byte[]) args[2];
                flows[(int) args[0]].send(new DatagramPacket(datagram, datagram.length, (InetSocketAddress) args[1]));
                return null;
            });
        return (ReceiveSide) Proxy.newProxyInstance(PunchingSockets.class.getClassLoader(),
            new Class<?>[] {ReceiveSide.class}, (proxy, method, args) -> {
                if (!method.getName().equals("localEndpoint")) {
                    throw new UnsupportedOperationException(method.getName());
                }
                return endpoint;
            });
    }
}
