package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.core.result.Environment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class EnvironmentProbeTest {
    @Test
    void netCoreSysctlsAreRecordedWhole() throws Exception {
        Environment env = EnvironmentProbe.describe(Map.of());
        for (String key : new String[] {"rmem_max", "wmem_max", "rmem_default", "wmem_default"}) {
            String path = "/proc/sys/net/core/" + key;
            assumeTrue(Files.isReadable(Path.of(path)), path + " is not readable here");
            assertThat(env.socketBuffers()).as(key).containsEntry("net.core." + key, Long.parseLong(cat(path)));
        }
    }

    /** The file as the cat tool prints it, trimmed. */
    private static String cat(String path) throws Exception {
        Process p = new ProcessBuilder("cat", path).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).as("cat finished").isTrue();
        assertThat(p.exitValue()).as("cat " + path + ": " + out).isZero();
        return out.trim();
    }
}
