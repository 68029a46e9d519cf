package io.lossprobe.aeron;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.transport.Transport;

/** The transport contract through reliable Aeron on an embedded media driver. */
class AeronContractTest extends TransportContractTest {
    @Override
    protected Transport transport() {
        return new AeronTransport();
    }

    @Override
    protected int basePort() {
        return 43000;
    }
}
