package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The entry point always has an exit code, so the process ends (with System.exit) whatever the command threw. */
class MainTest {
    @Test
    void anErrorIsOneLineAndExitCodeOne() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        int code = Main.exitCode(() -> {
            throw new NoClassDefFoundError("io/lossprobe/core/transport/TransportReport");
        }, err);
        assertThat(code).isEqualTo(1);
        assertThat(bytes.toString(StandardCharsets.UTF_8)).isEqualTo("lossprobe: internal error: "
            + "java.lang.NoClassDefFoundError: io/lossprobe/core/transport/TransportReport" + System.lineSeparator());
        assertThat(Main.exitCode(() -> 2, err)).isEqualTo(2);
    }
}
