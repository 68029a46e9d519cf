package io.lossprobe.tcp;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.transport.Transport;

class TcpContractTest extends TransportContractTest {
    @Override
    protected Transport transport() {
        return new TcpTransport();
    }

    @Override
    protected int basePort() {
        return 42000;
    }
}
