package io.lossprobe.control;

import static org.assertj.core.api.Assertions.assertThatCode;

import org.junit.jupiter.api.Test;

/**
 * The warm-up runs every handshake message through the codecs and the MACs and checks they read back; a codec change
 * that broke one would fail here (and at every server start) before any peer saw it. Its effect on the handshake's
 * time is measured, not asserted: see docs/two-hosts.md.
 */
class HandshakeWarmupTest {
    @Test
    void everyHandshakeMessageReadsBack() {
        assertThatCode(() -> HandshakeWarmup.run(ControlTesting.AUTH)).doesNotThrowAnyException();
    }
}
