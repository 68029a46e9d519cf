package io.lossprobe.aeron;

import io.lossprobe.core.contract.EchoContractTest;
import io.lossprobe.core.transport.Transport;

/**
 * Echo mode's contract through reliable Aeron on an embedded media driver. Requests use ports 43600-43607 at most
 * (8 flows), replies the next ones (basePort + ports + flow): 43608-43615.
 */
class AeronEchoContractTest extends EchoContractTest {
    @Override
    protected Transport transport() {
        return new AeronTransport();
    }

    @Override
    protected int basePort() {
        return 43600;
    }
}
