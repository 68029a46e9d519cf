package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class AeronEnvironmentTest {
    /** The keys results files carry under {@code environment} (docs/results.md): they never change spelling. */
    @Test
    void keysAreTheOnesResultsFilesCarry() {
        assertThat(Arrays.stream(AeronEnvironment.values()).map(k -> k.key)).containsExactly("termLength", "mtu",
            "maxPayloadLength", "embeddedDriver", "reliable", "headerLength");
    }
}
