package io.lossprobe.udp;

import io.lossprobe.core.contract.EchoContractTest;
import io.lossprobe.core.transport.Transport;

class UdpEchoContractTest extends EchoContractTest {
    @Override
    protected Transport transport() {
        return new UdpTransport();
    }

    @Override
    protected int basePort() {
        return 41800;
    }
}
