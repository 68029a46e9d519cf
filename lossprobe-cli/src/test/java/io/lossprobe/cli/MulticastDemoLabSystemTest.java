package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code scripts/multicast-demo.sh}, the one command for a multicast run on one host (docs/multicast.md), run as a
 * newcomer would, with lossprobe from this test's class path: it prints a line per receiver, and the lossy
 * receiver's {@code lost} equals what nftables dropped on its link (which the script prints beside), the others' 0;
 * and it leaves no namespace behind. Prefix {@code MCAST_DEMO_LAB_PREFIX} (default {@code lg-}). Needs root,
 * iproute2 and nftables; skipped elsewhere.
 */
@Tag("system")
@Tag("lab")
@LabLanes.Second
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MulticastDemoLabSystemTest {
    private static final Pattern RECEIVER = Pattern.compile(
        "^ {3}receiver (198\\.18\\.0\\.10[123]) +received [0-9,]+ lost (\\d+) ", Pattern.MULTILINE);
    private static final Pattern LINK = Pattern.compile(
        "^nftables at \\S+ \\((198\\.18\\.0\\.10[123])\\): arrived (\\d+), dropped (\\d+)$", Pattern.MULTILINE);

    @Test
    void theDemoShowsEachReceiverAndTheLossyOnesLossIsWhatItsLinkDropped() throws Exception {
        Lab lab = Lab.assumed("MCAST_DEMO_LAB_PREFIX", "lg-");
        ProcessBuilder pb = new ProcessBuilder(Paths.get("").toAbsolutePath().getParent()
            .resolve("scripts/multicast-demo.sh").toString());
        pb.environment().put("LAB_PREFIX", lab.ns(""));
        pb.environment().put("BASE_PORT", "29500");
        // 5 %: with UDP GSO 20,000 datagrams can be as few as 313 packets, where 1 % would drop none in 4 % of runs.
        pb.environment().put("LOSS", "5");
        pb.environment().put("LOSSPROBE", String.join(" ", Lab.java()));
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(4, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        java.util.Map<String, Long> lost = new java.util.TreeMap<>();
        for (Matcher m = RECEIVER.matcher(out); m.find();) {
            lost.put(m.group(1), Long.parseLong(m.group(2)));
        }
        java.util.Map<String, Long> dropped = new java.util.TreeMap<>();
        for (Matcher m = LINK.matcher(out); m.find();) {
            dropped.put(m.group(1), Long.parseLong(m.group(3)));
            assertThat(Long.parseLong(m.group(2))).as("arrived at %s", m.group(1)).isPositive();
        }
        assertThat(lost.keySet()).as(out).containsExactly("198.18.0.101", "198.18.0.102", "198.18.0.103");
        assertThat(dropped).as(out).isEqualTo(lost);
        assertThat(dropped.get("198.18.0.102")).as(out).isPositive();
        assertThat(dropped.get("198.18.0.101") + dropped.get("198.18.0.103")).as(out).isZero();
        List<String> left = Lab.exec("ip", "netns", "list").output().lines()
            .filter(l -> l.startsWith(lab.ns(""))).toList();
        assertThat(left).as("namespaces left behind").isEmpty();
    }
}
