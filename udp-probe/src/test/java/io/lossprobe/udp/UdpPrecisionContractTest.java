package io.lossprobe.udp;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.transport.Transport;
import java.util.Map;

/** The contract in the precision timing mode: busy-polling loops and, where it loads, the native stamped reader. */
class UdpPrecisionContractTest extends TransportContractTest {
    @Override
    protected Transport transport() {
        return new UdpTransport();
    }

    @Override
    protected int basePort() {
        return 47100;
    }

    @Override
    protected Map<String, String> options() {
        return Map.of("timing", "precision");
    }
}
