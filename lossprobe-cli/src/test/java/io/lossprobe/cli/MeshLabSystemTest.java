package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.analysis.MeshFiles;
import io.lossprobe.analysis.MeshResult;
import io.lossprobe.core.result.StepResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * A mesh for real: four hosts (network namespaces on one bridge, scripts/lab.sh with its own prefix so it can run
 * beside the two-host lab), each running {@code lossprobe serve} and its own {@code lossprobe mesh} on a shared
 * clock, with nftables dropping UDP on one host's link only. The merged mesh must localise the link exactly: the
 * six pairs through it lose what nftables dropped for that very pair (plus the receiving sockets' own drops), the
 * six others lose only their sockets' drops. Needs root, iproute2 and nftables; skipped elsewhere.
 */
@Tag("system")
@Tag("lab")
@LabLanes.Second
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class MeshLabSystemTest {
    private static final int SIZE = 64;
    /**
     * Longer than the estimate (13 s for this plan): here eight fresh JVMs share two cores, and a source's first pair
     * against a fresh serve took 10-11.5 s where a warm pair takes 3 s (the JIT, on both ends at once).
     */
    private static final String SLOT = "15s";
    /** The lab under MESH_LAB_PREFIX (default lm-), so a lab of one's own can run beside others. */
    private Lab lab;
    /** The host whose link is lossy. */
    private String lossy;
    private Path work;
    private Path secret;
    private Path hostsFile;
    private final Map<String, String> hosts = new LinkedHashMap<>();
    private final List<Process> servers = new ArrayList<>();

    @BeforeAll
    void upLab() throws Exception {
        lab = Lab.assumed("MESH_LAB_PREFIX", "lm-");
        lossy = lab.ns("tx2");
        assertThat(lab.run("up", "3").exit()).isZero();
        work = Files.createTempDirectory("lossprobe-mesh-lab");
        secret = work.resolve("secret");
        Files.writeString(secret, "mesh lab secret for lossprobe tests\n");
        String list = lab.run("hosts").output();
        hostsFile = Files.writeString(work.resolve("hosts.txt"), list);
        for (String line : list.strip().split("\n")) {
            String[] f = line.strip().split("\\s+");
            hosts.put(f[0], f[1]);
        }
        assertThat(hosts).hasSize(4);
        for (Map.Entry<String, String> h : hosts.entrySet()) {
            servers.add(startServe(h.getKey(), h.getValue()));
        }
    }

    @AfterAll
    void downLab() throws Exception {
        for (Process p : servers) {
            p.destroy();
        }
        for (Process p : servers) {
            p.waitFor(10, TimeUnit.SECONDS);
            p.destroyForcibly();
        }
        if (lab != null) {
            lab.down();
        }
    }

    private Process startServe(String ns, String address) throws Exception {
        Process p = Lab.startServe(ns, address, secret);
        Lab.awaitListening(p, "serve in " + ns + " started");
        return p;
    }

    /** UDP datagrams in an nftables counter of {@code {packets, bytes}}: a GSO packet carries several. */
    private static long datagrams(JsonNode counter) {
        long packets = counter.get("packets").asLong();
        long bytes = counter.get("bytes").asLong();
        assertThat((bytes - 28 * packets) % SIZE).as("whole datagrams").isZero();
        return (bytes - 28 * packets) / SIZE;
    }

    private static long socketDrops(StepResult s) {
        return s.socketDrops() == null ? 0 : s.socketDrops();
    }

    /**
     * Every pair complete, no host in two pairs of a round, and each pair's loss exactly what nftables dropped for
     * it plus its sockets' drops and late arrivals; {@code table} gets a line a pair. Returns the longest pair.
     */
    private long assertLocalisesTheLink(MeshResult mesh, JsonNode link, boolean slotted, StringBuilder table) {
        assertThat(mesh.pairs()).hasSize(12);
        assertThat(mesh.sources()).containsExactlyElementsOf(hosts.keySet());
        assertThat(mesh.schedule().rounds()).isEqualTo(6);
        // No host is in two pairs of one round.
        for (int r = 0; r < mesh.schedule().rounds(); r++) {
            int round = r;
            List<String> busy = mesh.pairs().stream().filter(p -> p.round() == round)
                .flatMap(p -> java.util.stream.Stream.of(p.source(), p.target())).toList();
            assertThat(busy).doesNotHaveDuplicates();
        }
        long maxPairMs = 0;
        for (MeshResult.Pair p : mesh.pairs()) {
            assertThat(p.status()).as("%s -> %s: %s", p.source(), p.target(), p.error())
                .isEqualTo(MeshResult.COMPLETE);
            if (slotted) {
                // A pair may start late (a stalled machine) if it still fits; its note says why.
                assertThat(p.lateMs() <= 2_000 || p.note() != null).as("late with a reason: %s", p.note()).isTrue();
                assertThat(p.lateMs() + p.durationMs()).as("%s -> %s ended inside its slot", p.source(), p.target())
                    .isLessThan(mesh.schedule().slotMs());
            }
            maxPairMs = Math.max(maxPairMs, p.durationMs());
            StepResult s = p.result().steps().get(0);
            Lab.sentItsSchedule(s, 10_000);
            assertThat(s.counts().received() + s.counts().lost()).isEqualTo(s.counts().sent());
            long dropped;
            if (p.target().equals(lossy)) {
                dropped = datagrams(link.get("in").get(p.source()));
            } else if (p.source().equals(lossy)) {
                dropped = datagrams(link.get("out").get(p.target()));
            } else {
                dropped = 0;
            }
            boolean throughLink = p.source().equals(lossy) || p.target().equals(lossy);
            if (throughLink) {
                assertThat(dropped).as("nftables dropped on %s -> %s", p.source(), p.target()).isPositive();
            }
            // Lost is everything not received within Tmax: what nftables dropped for this very pair, what the
            // receiving sockets dropped, and what came after Tmax (late: a cold JVM stalls for longer than the drain).
            assertThat(s.counts().lost()).as("%s -> %s", p.source(), p.target())
                .isEqualTo(dropped + socketDrops(s) + s.counts().late());
            table.append(String.format("%s -> %s round %d: sent %d lost %d = nft %d + k-drops %d + late %d; %d ms, "
                    + "%s ms late%s%n", p.source(), p.target(), p.round(), s.counts().sent(), s.counts().lost(),
                dropped, socketDrops(s), s.counts().late(), p.durationMs(), p.lateMs(),
                p.note() == null ? "" : ": " + p.note()));
        }
        return maxPairMs;
    }

    @Test
    void theMeshLocalisesALossyLinkExactly() throws Exception {
        assertThat(lab.run("link-loss", lossy, "2", "udp").exit()).isZero();
        // Every host runs its own share of the mesh; round 0 begins at the same instant on all of them. Four mesh JVMs
        // start at once: with the machine's load average at 19 one of them reached its first round 25.5 s after launch.
        Instant start = Instant.now().plusSeconds(30).truncatedTo(ChronoUnit.SECONDS);
        List<Process> meshes = new ArrayList<>();
        for (String ns : hosts.keySet()) {
            List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns));
            cmd.addAll(Lab.java());
            cmd.addAll(List.of("mesh", "--hosts-file", hostsFile.toString(), "--secret-file", secret.toString(),
                "--start-at", start.toString(), "--slot", SLOT, "--transport", "udp", "--ports", "4", "--levels",
                "5k", "--duration", "2s", "--warmup", "0", "--drain", "1s", "--quiet",
                "-o", work.resolve("mesh-" + ns + ".json").toString()));
            meshes.add(new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(work.resolve("mesh-" + ns + ".log").toFile()).start());
        }
        for (int i = 0; i < meshes.size(); i++) {
            Process p = meshes.get(i);
            assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
            String ns = new ArrayList<>(hosts.keySet()).get(i);
            assertThat(p.exitValue()).as(Files.readString(work.resolve("mesh-" + ns + ".log"))).isZero();
        }
        Instant end = Instant.now();
        JsonNode link = lab.counters().get("link");
        assertThat(link.get("host").asText()).isEqualTo(lossy);

        Path merged = work.resolve("mesh.json");
        List<String> merge = new ArrayList<>(List.of("mesh", "merge", "-o", merged.toString()));
        hosts.keySet().forEach(ns -> merge.add(work.resolve("mesh-" + ns + ".json").toString()));
        assertThat(RunCommandTest.execute(merge.toArray(String[]::new)).exit()).isZero();
        MeshResult mesh = MeshFiles.read(merged);

        StringBuilder table = new StringBuilder();
        long maxPairMs = assertLocalisesTheLink(mesh, link, true, table);
        System.out.printf("mesh of 4 hosts, 12 pairs, 6 rounds of %d ms: %s from round 0 to the last exit; "
                + "longest pair %d ms%n%s", mesh.schedule().slotMs(), Duration.between(start, end), maxPairMs, table);

        // The matrix and the check see the same: only pairs through the lossy link fail a zero-loss policy.
        Path policy = Files.writeString(work.resolve("policy.json"), "{\"defaults\": {\"maxLossPercent\": 0}}");
        Path prom = work.resolve("mesh.prom");
        RunCommandTest.Outcome check = RunCommandTest.execute("check", "--policy", policy.toString(), "--prometheus",
            prom.toString(), "--quiet", merged.toString());
        long throughLink = mesh.pairs().stream().filter(p -> p.source().equals(lossy) || p.target().equals(lossy))
            .count();
        long lossyElsewhere = mesh.pairs().stream().filter(p -> !p.source().equals(lossy)
            && !p.target().equals(lossy) && p.result().steps().get(0).counts().lost() > 0).count();
        assertThat(lossyElsewhere).as("pairs away from the link that lost (late or socket drops)").isLessThan(2);
        assertThat(check.exit()).isEqualTo(1);
        assertThat(check.out()).contains("mesh check FAILED: " + (throughLink + lossyElsewhere) + " of 12");
        assertThat(Files.readString(prom)).containsPattern("lossprobe_mesh_loss_ratio\\{name=\"mesh-[0-9a-f]{8}\","
            + "offered_rate=\"5000\",source=\"" + java.util.regex.Pattern.quote(lossy) + "\",target=\""
            + java.util.regex.Pattern.quote(lab.ns("rx")) + "\",transport=\"udp\"}");
        RunCommandTest.Outcome md = RunCommandTest.execute("report", "--format", "md", merged.toString());
        assertThat(md.exit()).isZero();
        assertThat(md.out()).contains("| " + lossy + " |");
    }

    /**
     * {@code mesh --drive}: one controller (in the lab's receiving namespace) runs all twelve pairs as {@code run
     * --from}, each source's serve sending to its target's, back to back: the same exact localisation, with no
     * start time, no mesh on the other hosts and nothing to merge.
     */
    @Test
    void oneControllerDrivesTheWholeMeshAndLocalisesTheLink() throws Exception {
        assertThat(lab.run("link-loss", lossy, "2", "udp").exit()).isZero();
        Path file = work.resolve("mesh-driven.json");
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", lab.ns("rx")));
        cmd.addAll(Lab.java());
        cmd.addAll(List.of("mesh", "--drive", "--hosts-file", hostsFile.toString(), "--secret-file",
            secret.toString(), "--transport", "udp", "--ports", "4", "--levels", "5k", "--duration", "2s",
            "--warmup", "0", "--drain", "1s", "--quiet", "-o", file.toString()));
        Path log = work.resolve("mesh-driven.log");
        Instant began = Instant.now();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as(Files.readString(log)).isZero();
        JsonNode link = lab.counters().get("link");
        MeshResult mesh = MeshFiles.read(file);
        StringBuilder table = new StringBuilder();
        long maxPairMs = assertLocalisesTheLink(mesh, link, false, table);
        System.out.printf("mesh --drive of 4 hosts, 12 pairs in 6 rounds back to back: %s; longest pair %d ms%n%s",
            Duration.between(began, Instant.now()), maxPairMs, table);
    }
}
