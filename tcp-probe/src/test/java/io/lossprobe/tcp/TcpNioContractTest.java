package io.lossprobe.tcp;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.transport.Transport;
import java.util.Map;

/** The same contract through the plain NIO fallback (no native epoll, no TCP_INFO). */
class TcpNioContractTest extends TransportContractTest {
    @Override
    protected Transport transport() {
        return new TcpTransport();
    }

    @Override
    protected int basePort() {
        return 42100;
    }

    @Override
    protected Map<String, String> options() {
        return Map.of("tcp.io", "nio");
    }
}
