package io.lossprobe.udp;

import io.lossprobe.core.contract.EchoContractTest;
import io.lossprobe.core.transport.Transport;
import java.util.Map;

/** Echo's contract on Netty's reads (no kernel timestamps): replies written and counted by the Netty handler. */
class UdpNettyEchoContractTest extends EchoContractTest {
    @Override
    protected Transport transport() {
        return new UdpTransport();
    }

    @Override
    protected int basePort() {
        return 47700;
    }

    @Override
    protected Map<String, String> options() {
        return Map.of("udp.timestamps", "user");
    }
}
