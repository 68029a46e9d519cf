package io.lossprobe.cli;

import static io.lossprobe.cli.RunCommandTest.execute;
import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.analysis.MeshFiles;
import io.lossprobe.analysis.MeshResult;
import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transports;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * IPv6 end to end on loopback ({@code ::1}): the embedded run, a {@code serve} on {@code ::1} forward, in reverse
 * and in echo mode, a mesh from a hosts file, and {@code -4} / {@code -6} on a name with both families, every
 * transport with every identity of docs/measurement.md checked. (Across hosts, with nftables' counts as ground truth:
 * LabSystemTest and DscpLabSystemTest over the lab's 2001:2::/48.) Short steps: about 20 s in all.
 */
@Tag("system")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class Ipv6LoopbackSystemTest {
    private static final String SECRET = "an IPv6 test secret of 32 bytes or more";
    private static final List<String> SHORT = List.of("--ports", "2", "--levels", "4k", "--duration", "500ms",
        "--warmup", "0", "--drain", "300ms", "--quiet");

    @TempDir
    Path dir;

    /** {@code lossprobe ARGS SHORT -o FILE} in this JVM; exit 0 and every identity on every step, or it fails. */
    private RunResult run(String name, String... args) throws Exception {
        Path out = dir.resolve(name + ".json");
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(SHORT);
        all.addAll(List.of("-o", out.toString()));
        RunCommandTest.Outcome o = execute(all.toArray(String[]::new));
        assertThat(o.exit()).as(o.out() + o.err()).isZero();
        RunResult r = ResultFiles.read(out);
        TransportContractTest.assertIdentities(r);
        return r;
    }

    /** Each transport ran its step, and only UDP may lose, exactly what the receiving sockets dropped. */
    private static void assertEveryTransportDelivered(RunResult r, List<String> transports) {
        assertThat(r.steps()).extracting(StepResult::transport).containsExactlyElementsOf(transports);
        for (StepResult s : r.steps()) {
            assertThat(s.counts().received()).as(s.transport()).isPositive();
            long kernel = s.socketDrops() == null ? 0 : s.socketDrops();
            assertThat(s.counts().lost()).as("%s lost", s.transport()).isEqualTo(s.transport().equals("udp")
                ? kernel : 0);
            assertThat(s.counts().corrupt() + s.counts().foreign()).isZero();
        }
    }

    private static ControlServer serve(StringWriter log) throws Exception {
        return new ControlServer("::1", 0, Auth.ofSecret(SECRET), ServerLimits.DEFAULTS, Transports::available,
            new PrintWriter(log, true));
    }

    private Path secret() throws Exception {
        return Files.writeString(dir.resolve("secret"), SECRET + "\n");
    }

    @Test
    void theEmbeddedRunOnIpv6LoopbackRunsEveryTransport() throws Exception {
        Path out = dir.resolve("embedded.json");
        List<String> args = new ArrayList<>(List.of("run", "--bind", "::1", "--transport", "udp,tcp,aeron",
            "--base-port", "44600", "-o", out.toString()));
        args.addAll(SHORT.subList(0, SHORT.size() - 1)); // not quiet: the first line names the address
        RunCommandTest.Outcome o = execute(args.toArray(String[]::new));
        assertThat(o.exit()).as(o.out() + o.err()).isZero();
        assertThat(o.out()).contains("udp,tcp,aeron over 2 ports from [::1]:44600");
        RunResult r = ResultFiles.read(out);
        TransportContractTest.assertIdentities(r);
        assertEveryTransportDelivered(r, List.of("udp", "tcp", "aeron"));
        assertThat(r.plan().bindAddress()).isEqualTo("::1");
    }

    @Test
    void aServeOnIpv6TakesForwardReverseAndEchoRuns() throws Exception {
        StringWriter log = new StringWriter();
        try (ControlServer server = serve(log)) {
            String target = "[::1]:" + server.port();
            String secret = secret().toString();
            RunResult forward = run("forward", "run", "--target", target, "--secret-file", secret, "--transport",
                "udp,tcp,aeron", "--base-port", "44610");
            assertEveryTransportDelivered(forward, List.of("udp", "tcp", "aeron"));
            assertThat(forward.plan().bindAddress()).isEqualTo("::1");

            // The receivers here bind every IPv6 address: the server sends to the address it saw the controller at.
            RunResult reverse = run("reverse", "run", "--target", target, "--secret-file", secret, "--reverse",
                "--transport", "udp,tcp,aeron", "--base-port", "44620");
            assertEveryTransportDelivered(reverse, List.of("udp", "tcp", "aeron"));
            assertThat(reverse.plan().bindAddress()).isEqualTo("::");

            RunResult echo = run("echo", "run", "--target", target, "--secret-file", secret, "--mode", "echo",
                "--transport", "udp,tcp,aeron", "--base-port", "44630");
            assertEveryTransportDelivered(echo, List.of("udp", "tcp", "aeron"));
            for (StepResult s : echo.steps()) {
                assertThat(s.echo().identitiesHold()).as(s.transport()).isTrue();
                assertThat(s.echo().repliesReceived()).as(s.transport()).isPositive();
            }
            // The server logs a session's end after it answered the goodbye, which may be after the run returned.
            Await.until("the third session's end in the server's log", 10_000,
                () -> log.toString().contains("session 3 from ::1 finished"), log::toString);
        }
        // The server's log writes the controller's address in its short form.
        assertThat(log.toString()).contains("session 1 from ::1: 2 ports from 44610", "session 3 from ::1 finished")
            .doesNotContain("0:0:0:0:0:0:0:1");
    }

    @Test
    void aMeshOverIpv6FromAHostsFile() throws Exception {
        StringWriter log = new StringWriter();
        try (ControlServer a = serve(log); ControlServer b = serve(log)) {
            Path hosts = Files.writeString(dir.resolve("hosts"), "# two serves on ::1\na [::1]:" + a.port()
                + "\nb=[0:0::1]:" + b.port() + "\n");
            Path out = dir.resolve("mesh.json");
            List<String> args = new ArrayList<>(List.of("mesh", "-6", "--hosts-file", hosts.toString(),
                "--secret-file", secret().toString(), "--transport", "udp,tcp", "--base-port", "44640", "--flows",
                "-o", out.toString()));
            args.addAll(SHORT);
            RunCommandTest.Outcome o = execute(args.toArray(String[]::new));
            assertThat(o.exit()).as(o.out() + o.err()).isZero();
            MeshResult mesh = MeshFiles.read(out);
            assertThat(mesh.pairs()).hasSize(2);
            for (MeshResult.Pair p : mesh.pairs()) {
                assertThat(p.status()).as("%s -> %s: %s", p.source(), p.target(), p.error())
                    .isEqualTo(MeshResult.COMPLETE);
                TransportContractTest.assertIdentities(p.result());
                assertEveryTransportDelivered(p.result(), List.of("udp", "tcp"));
            }
        }
    }

    /**
     * A name with both families ({@code both}: 127.0.0.1 and ::1, from a hosts file the JVM reads instead of the
     * system's, {@code jdk.net.hosts.file}) against a serve on ::1 alone: {@code -6} reaches it, {@code -4} goes to
     * 127.0.0.1, where nothing listens, and {@code -6} on a name with IPv4 only is bad usage.
     */
    @Test
    void minus4AndMinus6PickTheFamilyOfANameWithBoth() throws Exception {
        Path names = Files.writeString(dir.resolve("hosts"), "127.0.0.1 both\n::1 both\n127.0.0.1 v4only\n");
        try (ControlServer server = serve(new StringWriter())) {
            String secret = secret().toString();
            Path out = dir.resolve("v6.json");
            Exec v6 = lossprobe(names, "run", "-6", "--target", "both:" + server.port(), "--secret-file", secret,
                "--transport", "udp", "--ports", "1", "--levels", "1k", "--duration", "200ms", "--warmup", "0",
                "--drain", "100ms", "--quiet", "-o", out.toString());
            assertThat(v6.exit()).as(v6.output()).isZero();
            RunResult r = ResultFiles.read(out);
            TransportContractTest.assertIdentities(r);
            assertThat(r.plan().bindAddress()).isEqualTo("::1");

            Exec v4 = lossprobe(names, "run", "-4", "--target", "both:" + server.port(), "--secret-file", secret,
                "--transport", "udp", "-o", dir.resolve("v4.json").toString());
            assertThat(v4.exit()).as(v4.output()).isEqualTo(1);
            assertThat(v4.output()).contains("cannot reach lossprobe serve at 127.0.0.1:" + server.port());

            Exec none = lossprobe(names, "run", "-6", "--target", "v4only", "--secret-file", secret, "-o",
                dir.resolve("none.json").toString());
            assertThat(none.exit()).isEqualTo(2);
            assertThat(none.output().strip()).isEqualTo("lossprobe: -6: 'v4only' has no IPv6 address (it has "
                + "127.0.0.1)");
        }
    }

    record Exec(int exit, String output) {
    }

    /** lossprobe in a JVM of its own that resolves names from {@code hostsFile} alone. */
    private static Exec lossprobe(Path hostsFile, String... args) throws Exception {
        Process p = ChildLossprobe.builder(List.of("-Djdk.net.hosts.file=" + hostsFile), args).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Exec(p.exitValue(), out);
    }
}
