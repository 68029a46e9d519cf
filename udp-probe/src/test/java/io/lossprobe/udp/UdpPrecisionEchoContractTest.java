package io.lossprobe.udp;

import io.lossprobe.core.contract.EchoContractTest;
import io.lossprobe.core.transport.Transport;
import java.util.Map;

/** Echo's contract in the precision timing mode: replies sent by the stamped reader, read by a busy sender loop. */
class UdpPrecisionEchoContractTest extends EchoContractTest {
    @Override
    protected Transport transport() {
        return new UdpTransport();
    }

    @Override
    protected int basePort() {
        return 47200;
    }

    @Override
    protected Map<String, String> options() {
        return Map.of("timing", "precision");
    }
}
