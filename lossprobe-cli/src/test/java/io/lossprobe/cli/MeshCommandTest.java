package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.analysis.MeshFiles;
import io.lossprobe.analysis.MeshResult;
import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.transport.Transports;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code lossprobe mesh} on loopback: serves on 127.0.0.2-4 in this JVM, a fourth host that is down. */
class MeshCommandTest {
    private static final String SECRET = "a mesh secret for tests";

    @TempDir
    Path dir;

    private static RunCommandTest.Outcome execute(String... args) {
        return RunCommandTest.execute(args);
    }

    @Test
    void helpDocumentsTheHostListTheScheduleAndTheOutput() {
        RunCommandTest.Outcome o = execute("mesh", "--help");
        assertThat(o.exit()).isZero();
        assertThat(o.out()).contains("Host list:", "--hosts-file", "--host", "--hosts-dns", "Pairs:", "--pairs",
            "Schedule:", "--start-at", "--drive",
            "--slot", "--slack", "--parallel", "--as-source", "Output:", "--output",
            "--levels", "--transport", "Exit codes", "merge");
        assertThat(execute("mesh", "merge", "--help").out()).contains("MESH.json", "missing");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "--host a=127.0.0.2|a mesh needs at least two hosts",
        "--host a=127.0.0.2 --host a=127.0.0.3|host 'a' is listed twice",
        "--host a=127.0.0.2 --host b=127.0.0.3 --pairs star|--pairs must be full, ring, targets or sample:K",
        "--host a=127.0.0.2 --host b=127.0.0.3 --levels fast|'fast'",
        "--host a=127.0.0.2 --host b=127.0.0.3 --start-at soon|--start-at 'soon'",
        "--host a=127.0.0.2 --host b=127.0.0.3 --as-source c|--as-source: 'c' is not one of the hosts",
        "--host a=198.51.100.1 --host b=198.51.100.2|none of the hosts is this host",
        "--host a=127.0.0.2 --host b=198.51.100.2|pairs from b must run on those hosts",
        "--hosts-file /nonexistent/hosts|cannot read host list /nonexistent/hosts: no such file",
        "--host a=127.0.0.2 --host b=198.51.100.2 --start-at 2020-01-01T00:00:00Z"
            + "|--start-at 2020-01-01T00:00:00Z is over",
        "--host a=127.0.0.2 --host b=127.0.0.3 --junit x.xml|--junit goes with --policy",
        "--host a=127.0.0.2 --host b=127.0.0.3 --hosts-dns no-such-host.invalid|unknown host 'no-such-host.invalid'",
        "-6 --host a=127.0.0.2 --host b=[::1]|-6 with the IPv4 address 127.0.0.2 (host a)",
        "-4 --host a=127.0.0.2 --host b=::1|-4 with the IPv6 address ::1 (host b)",
        "-4 -6 --host a=127.0.0.2 --host b=127.0.0.3|-4 and -6 exclude each other",
        "--host a=127.0.0.2 --host b=127.0.0.3 --pattern steady|unknown pattern 'steady'",
        "--host a=127.0.0.2 --host b=127.0.0.3 --drive --start-at 12:00|--drive runs every pair from here, back to "
            + "back: it does not go with --start-at",
        "--host a=127.0.0.2 --host b=127.0.0.3 --drive --as-source a|it does not go with --as-source",
    })
    void badInputExitsTwoWithOneLine(String args, String expected) {
        List<String> all = new ArrayList<>(List.of("mesh", "--secret-file", "/dev/null"));
        all.addAll(List.of(args.split(" ")));
        RunCommandTest.Outcome o = execute(all.toArray(String[]::new));
        assertThat(o.exit()).as(o.out() + o.err()).isEqualTo(2);
        assertThat(o.err().strip()).contains(expected).doesNotContain("Exception");
        assertThat(o.err().strip().lines().count()).isEqualTo(1);
    }

    @Test
    void aDryRunPrintsTheRoundsAndTheirTimes() {
        RunCommandTest.Outcome o = execute("mesh", "--dry-run", "--host", "a=127.0.0.2", "--host", "b=198.51.100.2",
            "--host", "c=198.51.100.3", "--start-at", "2026-12-01T03:05:00Z", "--transport", "udp", "--levels",
            "10k", "--duration", "5s");
        assertThat(o.exit()).as(o.err()).isZero();
        // 3 hosts, 6 pairs, 6 rounds; slot: 4 s + 1 s + (1 + 5 + 1 + 0.3) s + 2 x 2 s slack = 16.3 s -> 17 s.
        assertThat(o.out()).contains("3 hosts, full: 6 pairs in 6 rounds", "slot 17.00s from 2026-12-01T03:05:00Z",
            "about 1.7 min in all", "2 pairs from here (a)", "round 5 at 2026-12-01T03:06:25Z:");
        assertThat(o.out().lines().filter(l -> l.startsWith("round ")).count()).isEqualTo(6);
    }

    @Test
    @Tag("system")
    @Timeout(180)
    void aMeshOnLoopbackTreatsADownHostAsAResult() throws Exception {
        Path secret = Files.writeString(dir.resolve("secret"), SECRET + "\n");
        List<ControlServer> servers = new ArrayList<>();
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort(); // nothing listens there once closed: host d is down
        }
        try {
            List<String> args = new ArrayList<>(List.of("mesh", "--secret-file", secret.toString()));
            for (int i = 0; i < 3; i++) {
                ControlServer server = new ControlServer("127.0.0." + (i + 2), 0, Auth.ofSecret(SECRET),
                    ServerLimits.DEFAULTS, Transports::available, new PrintWriter(new StringWriter()));
                servers.add(server);
                args.addAll(List.of("--host", (char) ('a' + i) + "=127.0.0." + (i + 2) + ":" + server.port()));
            }
            args.addAll(List.of("--host", "d=127.0.0.5:" + closedPort));
            Path out = dir.resolve("mesh.json");
            Path prom = dir.resolve("mesh.prom");
            Path policy = Files.writeString(dir.resolve("policy.json"), "{\"defaults\": {\"maxLossPercent\": 5}}");
            args.addAll(List.of("--transport", "udp", "--ports", "2", "--base-port", "45700", "--levels", "2k",
                "--pattern", "burst:4",
                "--duration", "300ms", "--warmup", "100ms", "--drain", "200ms", "--connect-timeout", "2s", "-o",
                out.toString(), "--policy", policy.toString(), "--prometheus", prom.toString()));
            RunCommandTest.Outcome o = execute(args.toArray(String[]::new));
            // Every pair ran or failed; the failures to the down host fail the policy, hence exit 1.
            assertThat(o.exit()).as(o.out() + o.err()).isEqualTo(1);
            assertThat(o.out()).contains("4 hosts, full: 12 pairs in 6 rounds; rounds back to back",
                "a -> d                   FAILED: cannot reach lossprobe serve at 127.0.0.5:" + closedPort,
                "12 pair(s) from here", "3 failed", "9 complete", "FAIL a -> d did not run (failed: cannot reach");
            MeshResult mesh = MeshFiles.read(out);
            assertThat(mesh.pairs()).hasSize(12);
            for (MeshResult.Pair p : mesh.pairs()) {
                if (p.target().equals("d")) {
                    assertThat(p.status()).isEqualTo(MeshResult.FAILED);
                    assertThat(p.result()).isNull();
                } else {
                    // On loopback d's pairs are sent from this process, so they run although d's serve is down.
                    assertThat(p.status()).as("%s -> %s: %s", p.source(), p.target(), p.error())
                        .isEqualTo(MeshResult.COMPLETE);
                    var step = p.result().steps().get(0);
                    assertThat(step.counts().scheduled()).isEqualTo(600);
                    assertThat(p.result().plan().pattern()).as("each pair sends in bursts").isEqualTo("burst:4");
                    assertThat(step.flows()).as("per-flow results are dropped without --flows").isEmpty();
                    assertThat(p.result().plan().bindAddress()).isEqualTo(mesh.hosts().stream()
                        .filter(h -> h.name().equals(p.target())).findFirst().orElseThrow().address());
                }
            }
            assertThat(Files.readString(prom))
                .containsPattern("lossprobe_mesh_pair_up\\{name=\"mesh-[0-9a-f]{8}\",source=\"a\",target=\"d\"} 0.0")
                .containsPattern("lossprobe_mesh_pair_up\\{name=\"mesh-[0-9a-f]{8}\",source=\"d\",target=\"a\"} 1.0");
            RunCommandTest.Outcome md = execute("report", "--format", "md", out.toString());
            assertThat(md.out()).contains("| a | · | 0.000% / ", "- c -> d: failed: cannot reach");
        } finally {
            for (ControlServer s : servers) {
                s.close();
            }
        }
    }
}
