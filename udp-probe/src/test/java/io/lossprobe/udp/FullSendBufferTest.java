package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A full socket send buffer (EAGAIN), for real: {@link FullSendBufferRun} runs in a network namespace of this test's
 * own whose loopback has a tbf qdisc (8 Mbit/s, an 8 MB queue), so every datagram sent waits in the qdisc, charged
 * to its socket, and a socket with the smallest SO_SNDBUF is full after a few. On both send paths the messages the
 * socket could not take must count as behind, never as sendFailed or lost, with both identities holding; on the
 * Netty path the pooled memory of the blocked flows must stay under its documented bound. Needs root, iproute2 and
 * tc (skipped otherwise).
 */
@Tag("system")
class FullSendBufferTest {
    private static final String NS = "lpfsb-" + ProcessHandle.current().pid();

    @BeforeAll
    static void namespace() throws Exception {
        assumeTrue(isRoot() && sh("ip", "-V") == 0 && sh("tc", "-V") == 0, "needs root, iproute2 and tc");
        sh("ip", "netns", "del", NS);
        assertThat(sh("ip", "netns", "add", NS)).isZero();
        assertThat(sh("ip", "-n", NS, "link", "set", "lo", "up")).isZero();
        assertThat(sh("tc", "-n", NS, "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "8mbit", "burst", "16kb",
            "limit", "8mb")).isZero();
    }

    @AfterAll
    static void removeNamespace() throws Exception {
        sh("ip", "netns", "del", NS);
    }

    @Test
    @Timeout(120)
    void theNativePathCountsWhatAFullSendBufferRefusedAsBehind() throws Exception {
        assumeTrue(NativeUdp.available(), "needs the native piece");
        runInNamespace("native");
    }

    @Test
    @Timeout(120)
    void theNettyPathCountsItAsBehindAndItsBlockedFlowsHoldBoundedMemory() throws Exception {
        runInNamespace("netty");
    }

    private static void runInNamespace(String path) throws Exception {
        long dropsBefore = qdiscDrops();
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", NS,
            ProcessHandle.current().info().command().orElse("java"),
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), FullSendBufferRun.class.getName(), path));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        boolean done = p.waitFor(100, TimeUnit.SECONDS);
        if (!done) {
            p.destroyForcibly();
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        System.out.println(out);
        assertThat(done).as("the run ended").isTrue();
        assertThat(p.exitValue()).as("the checks in the namespace passed:%n%s", out).isZero();
        assertThat(qdiscDrops()).as("tbf dropped nothing: no loss was expected").isEqualTo(dropsBefore);
    }

    private static long qdiscDrops() throws Exception {
        Process p = new ProcessBuilder("tc", "-n", NS, "-s", "qdisc", "show", "dev", "lo").start();
        String s = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(10, TimeUnit.SECONDS);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("dropped (\\d+)").matcher(s);
        assertThat(m.find()).as("tc's statistics: %s", s).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static boolean isRoot() throws Exception {
        Process p = new ProcessBuilder("id", "-u").start();
        String uid = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.waitFor(10, TimeUnit.SECONDS);
        return uid.equals("0");
    }

    private static int sh(String... cmd) throws Exception {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
            return p.waitFor(20, TimeUnit.SECONDS) ? p.exitValue() : -1;
        } catch (IOException e) {
            return -1;
        }
    }
}
