package io.lossprobe.tcp;

import io.lossprobe.core.contract.EchoContractTest;
import io.lossprobe.core.transport.Transport;

class TcpEchoContractTest extends EchoContractTest {
    @Override
    protected Transport transport() {
        return new TcpTransport();
    }

    @Override
    protected int basePort() {
        return 42400;
    }
}
