package io.lossprobe.udp;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.transport.Transport;
import java.util.Map;

/**
 * The contract on the default path, and on the native send path explicitly where the native piece loads (the
 * fallback paths: {@link UdpNettySendContractTest}, {@link UdpNioContractTest}).
 */
class UdpContractTest extends TransportContractTest {
    @Override
    protected Transport transport() {
        return new UdpTransport();
    }

    @Override
    protected int basePort() {
        return 41000;
    }

    @Override
    protected Map<String, String> options() {
        return NativeUdp.available() ? Map.of("udp.send", "native") : Map.of();
    }
}
