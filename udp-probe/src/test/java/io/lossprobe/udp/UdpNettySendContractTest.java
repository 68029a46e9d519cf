package io.lossprobe.udp;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.transport.Transport;
import java.util.Map;

/**
 * The contract through the Netty send path (a GSO send per flow), the fallback where the native piece is missing;
 * {@link UdpContractTest} runs the default, the native path wherever it loads.
 */
class UdpNettySendContractTest extends TransportContractTest {
    @Override
    protected Transport transport() {
        return new UdpTransport();
    }

    @Override
    protected int basePort() {
        return 47600;
    }

    @Override
    protected Map<String, String> options() {
        return Map.of("udp.send", "netty");
    }
}
