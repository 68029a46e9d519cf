package io.lossprobe.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class TcpEnvironmentTest {
    /** The keys results files carry under {@code environment} (docs/results.md): they never change spelling. */
    @Test
    void keysAreTheOnesResultsFilesCarry() {
        assertThat(Arrays.stream(TcpEnvironment.values()).map(k -> k.key)).containsExactly("noDelay",
            "writeBufferHighWaterMark", "sendBufferRequested", "sendBufferGranted", "receiveBufferRequested",
            "receiveBufferGranted");
    }
}
