package io.lossprobe.udp;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.transport.Transport;

class UdpContractTest extends TransportContractTest {
    @Override
    protected Transport transport() {
        return new UdpTransport();
    }

    @Override
    protected int basePort() {
        return 41000;
    }
}
