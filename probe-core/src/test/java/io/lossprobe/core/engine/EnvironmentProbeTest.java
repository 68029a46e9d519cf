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

    @Test
    void bufferSizesAndTransportSettingsGoToTheirOwnMaps() {
        Map<String, Long> reported = Map.of(
            "udp.receiveBufferRequested", 4_194_304L, "udp.receiveBufferGranted", 8_388_608L,
            "udp.remote.sendBufferGranted", 425_984L, "tcp.sendBufferRequested", 65_536L,
            "udp.gsoSegmentsPerSend", 64L, "udp.io.epoll", 1L, "udp.remote.receiveThreads", 2L,
            "tcp.noDelay", 1L, "tcp.writeBufferHighWaterMark", 262_144L, "aeron.termLength", 16_777_216L);
        Environment env = EnvironmentProbe.describe(reported);
        assertThat(env.socketBuffers()).containsOnlyKeys(keys(env.socketBuffers(), "net.core.",
            "udp.receiveBufferRequested", "udp.receiveBufferGranted", "udp.remote.sendBufferGranted",
            "tcp.sendBufferRequested"));
        assertThat(env.socketBuffers()).containsEntry("udp.receiveBufferGranted", 8_388_608L);
        assertThat(env.transportSettings()).containsOnly(
            Map.entry("udp.gsoSegmentsPerSend", 64L), Map.entry("udp.io.epoll", 1L),
            Map.entry("udp.remote.receiveThreads", 2L), Map.entry("tcp.noDelay", 1L),
            Map.entry("tcp.writeBufferHighWaterMark", 262_144L), Map.entry("aeron.termLength", 16_777_216L));
    }

    /** The given keys plus whichever keys of {@code map} start with {@code prefix}. */
    private static String[] keys(Map<String, Long> map, String prefix, String... more) {
        return java.util.stream.Stream.concat(map.keySet().stream().filter(k -> k.startsWith(prefix)),
            java.util.Arrays.stream(more)).toArray(String[]::new);
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
