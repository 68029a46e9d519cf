package io.lossprobe.udp;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.transport.Transport;
import java.util.Map;

/** The same contract through the plain NIO fallback (no native epoll). */
class UdpNioContractTest extends TransportContractTest {
    @Override
    protected Transport transport() {
        return new UdpTransport();
    }

    @Override
    protected int basePort() {
        return 41100;
    }

    @Override
    protected Map<String, String> options() {
        return Map.of("udp.io", "nio");
    }
}
