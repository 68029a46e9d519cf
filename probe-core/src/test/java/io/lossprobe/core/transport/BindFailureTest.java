package io.lossprobe.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.BindException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The bind failure's hint reads this host's real ephemeral range, as sysctl shows it. */
class BindFailureTest {
    private static final Path RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

    /** The range as the sysctl tool prints it: independent of BindFailure's own reading. */
    private static int[] sysctlRange() throws Exception {
        Process p = new ProcessBuilder("sysctl", "-n", "net.ipv4.ip_local_port_range").redirectErrorStream(true)
            .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        assertThat(p.waitFor()).as(out).isZero();
        String[] parts = out.split("\\s+");
        return new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])};
    }

    @Test
    void readsTheWholeProcfsFile() throws Exception {
        // procfs reports size 0: a reader that trusts the size gets the first byte only ("3" of "32768 60999").
        assertThat(BindFailure.ephemeralRange(RANGE)).containsExactly(sysctlRange());
    }

    @Test
    void portsInsideTheEphemeralRangeGetTheHint() throws Exception {
        int[] range = sysctlRange();
        IOException e = BindFailure.of("listen for TCP", "0.0.0.0", range[0] + 10, range[0] + 17,
            new BindException("Address already in use"));
        assertThat(e.getMessage()).startsWith("cannot listen for TCP on 0.0.0.0 ports " + (range[0] + 10) + "-"
                + (range[0] + 17) + ": Address already in use")
            .contains("inside the kernel's ephemeral range " + range[0] + "-" + range[1])
            .contains("net.ipv4.ip_local_reserved_ports");
    }

    @Test
    void portsOutsideItDoNot() throws Exception {
        int[] range = sysctlRange();
        IOException e = BindFailure.of("bind UDP receivers", "127.0.0.1", range[0] - 8, range[0] - 1,
            new BindException("Address already in use"));
        assertThat(e.getMessage()).isEqualTo("cannot bind UDP receivers on 127.0.0.1 ports " + (range[0] - 8) + "-"
            + (range[0] - 1) + ": Address already in use");
    }
}
