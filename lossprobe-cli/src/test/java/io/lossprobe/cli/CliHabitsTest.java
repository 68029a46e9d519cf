package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.transport.Transports;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** What a user meets first: typos, help, addresses, and errors in words. */
class CliHabitsTest {
    @TempDir
    Path dir;

    private static RunCommandTest.Outcome execute(String... args) {
        return RunCommandTest.execute(args);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "rnu|unknown command 'rnu'; did you mean 'run'?",
        "reprot|did you mean 'report'?",
        "serv|did you mean 'serve'?",
        "xyzzy|unknown command 'xyzzy' (commands: run, serve",
        "run --levles 1k|unknown option '--levles' for 'lossprobe run'; did you mean '--levels'?",
        "run --trasnport=udp|did you mean '--transport'?",
        "serve --max-rte 1k|did you mean '--max-rate'?",
        "check --policy p.json --junt j.xml r.json|did you mean '--junit'?",
    })
    void aTypoGetsADidYouMean(String args, String expected) {
        RunCommandTest.Outcome o = execute(args.split(" "));
        assertThat(o.exit()).isEqualTo(2);
        assertThat(o.err().strip()).contains(expected);
        assertThat(o.err().strip().lines().count()).as(o.err()).isEqualTo(1);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "--dscp CS8 --transport udp|lossprobe: --dscp: unknown class 'CS8'; give EF, AF11-AF43, CS0-CS7 or 0-63",
        "--dscp 64 --transport udp|lossprobe: --dscp 64 is above 63 (a DSCP is 6 bits)",
        "--dscp EF,,CS1 --transport udp|lossprobe: --dscp has an empty class; give EF, AF11-AF43, CS0-CS7 or 0-63",
        "--dscp EF --transport udp,aeron|lossprobe: --dscp: Aeron cannot mark traffic classes (its channels and "
            + "media driver have no TOS / traffic-class setting); choose --transport udp,tcp",
    })
    void aBadTrafficClassIsOneLineBeforeAnyTraffic(String args, String expected) {
        List<String> all = new ArrayList<>(List.of("run", "-o", dir.resolve("r.json").toString()));
        all.addAll(List.of(args.split(" ")));
        RunCommandTest.Outcome o = execute(all.toArray(String[]::new));
        assertThat(o.exit()).as(o.err()).isEqualTo(2);
        assertThat(o.err().strip()).isEqualTo(expected);
        assertThat(dir.resolve("r.json")).as("refused before anything was written").doesNotExist();
        RunCommandTest.Outcome empty = execute("run", "--transport", "udp", "--dscp", "", "-o",
            dir.resolve("r.json").toString());
        assertThat(empty.exit()).isEqualTo(2);
        assertThat(empty.err().strip()).isEqualTo("lossprobe: --dscp is empty; give EF, AF11-AF43, CS0-CS7 or 0-63, "
            + "comma-separated");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "--pattern steady|lossprobe: --pattern: unknown pattern 'steady'; give constant, burst:N, burst:N/INTERVAL, "
            + "poisson or onoff:ON/OFF",
        "--pattern burst:0|lossprobe: --pattern burst:0: the burst size must be between 1 and 1000000000",
        "--pattern burst:x/10ms|lossprobe: --pattern burst:x/10ms: the burst size 'x' is not a whole number "
            + "(burst:N or burst:N/INTERVAL, e.g. burst:64/10ms)",
        "--pattern onoff:100ms|lossprobe: --pattern onoff:100ms: give onoff:ON/OFF, e.g. onoff:100ms/100ms",
        "--pattern burst:64/10ms --levels 30k|lossprobe: --pattern burst:64/10ms is 64 messages per 10ms per flow, "
            + "but a flow of this run sends 7500/s; give a level that makes 64 per 10ms per flow, or burst:64 (the "
            + "level sets the rate) (level 30k over 4 ports)",
        "--pattern burst:64/10ms --levels 25.6k,max|lossprobe: --pattern burst:64/10ms has a rate of its own; the "
            + "level 'max' has none (use burst:64) (level max over 4 ports)",
        "--pattern burst:64/10ms --levels 25.6k --search ndr|lossprobe: --pattern burst:64/10ms has a rate of its "
            + "own and --search picks rates; use burst:64 (the rate sets the interval)",
    })
    void aBadPatternIsOneLineBeforeAnyTraffic(String args, String expected) {
        List<String> all = new ArrayList<>(List.of("run", "-o", dir.resolve("r.json").toString(), "--transport",
            "udp", "--ports", "4", "--base-port", "31870"));
        all.addAll(List.of(args.split(" ")));
        RunCommandTest.Outcome o = execute(all.toArray(String[]::new));
        assertThat(o.exit()).as(o.err()).isEqualTo(2);
        assertThat(o.err().strip()).isEqualTo(expected);
        assertThat(dir.resolve("r.json")).as("refused before anything was written").doesNotExist();
        RunCommandTest.Outcome seed = execute("run", "--transport", "udp", "--pattern", "poisson", "--seed", "x",
            "-o", dir.resolve("r.json").toString());
        assertThat(seed.exit()).isEqualTo(2);
        assertThat(seed.err().strip().lines().count()).as(seed.err()).isEqualTo(1);
    }

    /** A secret file as keygen would leave it: only its owner reads it, so no warning joins the one line. */
    private Path secretFile(String name, String text) throws java.io.IOException {
        Path file = Files.writeString(dir.resolve(name), text);
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    /**
     * run and mesh refuse, before any traffic, to write --prometheus or --junit over one of their own inputs (the
     * policy, a run's baseline, the secret, mesh's hosts file): the file stays as it was.
     */
    @Test
    void runAndMeshRefuseToWriteTheirCheckFilesOverTheirInputs() throws java.io.IOException {
        Path policy = Files.writeString(dir.resolve("policy.json"), "{\"defaults\": {\"maxLossPercent\": 1}}");
        Path secret = secretFile("lp.secret", "0123456789abcdef0123456789abcdef\n");
        Path hosts = Files.writeString(dir.resolve("hosts.txt"), "127.0.0.1:7400\n");
        String[][] cases = {
            {"run", "--transport", "udp", "--ports", "1", "--levels", "1k", "--duration", "100ms", "--warmup", "0",
                "--policy", policy.toString(), "--prometheus", policy.toString()},
            {"run", "--transport", "udp", "--ports", "1", "--levels", "1k", "--duration", "100ms", "--warmup", "0",
                "--policy", policy.toString(), "--junit", policy.toString()},
            {"mesh", "--hosts-file", hosts.toString(), "--secret-file", secret.toString(), "--transport", "udp",
                "--prometheus", hosts.toString()},
            {"mesh", "--hosts-file", hosts.toString(), "--secret-file", secret.toString(), "--transport", "udp",
                "--prometheus", secret.toString()},
        };
        byte[][] before = {Files.readAllBytes(policy), Files.readAllBytes(secret), Files.readAllBytes(hosts)};
        for (String[] args : cases) {
            RunCommandTest.Outcome o = execute(args);
            assertThat(o.exit()).as("%s: %s", String.join(" ", args), o.err()).isEqualTo(2);
            assertThat(o.err().strip()).contains("refusing to write").contains("over the input");
            assertThat(o.err().strip().lines().count()).as(o.err()).isEqualTo(1);
        }
        assertThat(Files.readAllBytes(policy)).isEqualTo(before[0]);
        assertThat(Files.readAllBytes(secret)).isEqualTo(before[1]);
        assertThat(Files.readAllBytes(hosts)).isEqualTo(before[2]);
    }

    /**
     * Every output of run and mesh, not only the check's files, is refused over one of their inputs before any
     * traffic: {@code -o} over the policy, the baseline or the secret, {@code --stream} over the secret, a mesh's
     * {@code -o} over its hosts file, secret or policy. Exit 2, one line, every input as it was. (Ports
     * 52300..52301 only, should a run get as far as traffic.)
     */
    @Test
    void runAndMeshRefuseToWriteAnyOutputOverTheirInputs() throws java.io.IOException {
        Path policy = Files.writeString(dir.resolve("policy.json"), "{\"defaults\": {\"maxLossPercent\": 1}}");
        Path baseline = Files.writeString(dir.resolve("baseline.json"), "{}");
        Path secret = secretFile("lp.secret", "0123456789abcdef0123456789abcdef\n");
        Path hosts = Files.writeString(dir.resolve("hosts.txt"), "a 127.0.0.1:52300\nb 127.0.0.2:52300\n");
        String[] run = {"run", "--transport", "udp", "--ports", "1", "--levels", "1k", "--duration", "100ms",
            "--warmup", "0", "--base-port", "52301"};
        String[] remote = {"--target", "127.0.0.1:52300", "--secret-file", secret.toString()};
        String[] mesh = {"mesh", "--hosts-file", hosts.toString(), "--secret-file", secret.toString(), "--transport",
            "udp", "--base-port", "52301", "--duration", "100ms", "--as-source", "a"};
        String[][] cases = {
            concat(run, "--policy", policy.toString(), "-o", policy.toString()),
            concat(run, "--policy", policy.toString(), "--baseline", baseline.toString(), "-o", baseline.toString()),
            concat(concat(run, remote), "-o", secret.toString()),
            concat(concat(run, remote), "--stream", secret.toString()),
            concat(mesh, "-o", hosts.toString()),
            concat(mesh, "-o", secret.toString()),
            concat(mesh, "--policy", policy.toString(), "-o", dir.resolve("./policy.json").toString()),
        };
        List<byte[]> before = new ArrayList<>();
        for (Path p : List.of(policy, baseline, secret, hosts)) {
            before.add(Files.readAllBytes(p));
        }
        for (String[] args : cases) {
            RunCommandTest.Outcome o = execute(args);
            assertThat(o.exit()).as("%s: %s", String.join(" ", args), o.err()).isEqualTo(2);
            assertThat(o.err().strip()).as(String.join(" ", args)).contains("refusing to write")
                .contains("over the input");
            assertThat(o.err().strip().lines().count()).as(o.err()).isEqualTo(1);
        }
        int i = 0;
        for (Path p : List.of(policy, baseline, secret, hosts)) {
            assertThat(Files.readAllBytes(p)).as(p.toString()).isEqualTo(before.get(i++));
        }
    }

    private static String[] concat(String[] head, String... tail) {
        String[] all = java.util.Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        return all;
    }

    @Test
    void editDistanceCountsASwapAsOne() {
        assertThat(Suggestions.distance("rnu", "run")).isEqualTo(1);
        assertThat(Suggestions.distance("levles", "levels")).isEqualTo(1);
        assertThat(Suggestions.distance("serve", "serve")).isZero();
        assertThat(Suggestions.closest("rn", List.of("run", "report", "serve"))).containsExactly("run");
    }

    /** Picocli warns on System.err when a description holds a lone '%'; no command's help may do that. */
    @Test
    void helpOfEveryCommandPrintsNoWarnings() {
        PrintStream saved = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        List<String> helps = new ArrayList<>();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            CommandLine top = LossprobeCommand.commandLine();
            collect(top, helps);
        } finally {
            System.setErr(saved);
        }
        assertThat(captured.toString(StandardCharsets.UTF_8)).isEmpty();
        assertThat(helps).allSatisfy(h -> assertThat(h).doesNotContain("WARN").doesNotContain("%n"));
        assertThat(helps.size()).isGreaterThanOrEqualTo(6);
    }

    private static void collect(CommandLine cl, List<String> helps) {
        StringWriter out = new StringWriter();
        cl.usage(new PrintWriter(out), CommandLine.Help.Ansi.OFF);
        helps.add(out.toString());
        for (CommandLine sub : cl.getSubcommands().values()) {
            if (!sub.getCommandName().equals("help")) {
                collect(sub, helps);
            }
        }
    }

    @Test
    void ipv6AddressesArePrintedInBrackets() {
        assertThat(HostPort.format("::1", 7400)).isEqualTo("[::1]:7400");
        assertThat(HostPort.format("198.18.0.1", 7400)).isEqualTo("198.18.0.1:7400");
        assertThat(HostPort.parse("[fe80::1]:7401", 7400).toString()).isEqualTo("[fe80::1]:7401");
        assertThat(HostPort.format("2001:2:0:0:0:0:0:11", 52600)).as("short form, RFC 5952")
            .isEqualTo("[2001:2::11]:52600");
    }

    @Test
    void serveRefusesAnAddressOfTheOtherFamily() throws Exception {
        Path secret = secretFile("s", "a secret of some length, 32 bytes or more\n");
        for (String[] args : List.of(new String[] {"-4", "--bind", "::1"}, new String[] {"-6", "--bind", "127.0.0.1"},
            new String[] {"-4", "-6"})) {
            List<String> all = new ArrayList<>(List.of("serve", "--secret-file", secret.toString()));
            all.addAll(List.of(args));
            RunCommandTest.Outcome o = execute(all.toArray(String[]::new));
            assertThat(o.exit()).as(o.err()).isEqualTo(2);
            assertThat(o.err().strip()).as(String.join(" ", args)).matches("lossprobe: -4 with the IPv6 address ::1 "
                + "\\(--bind\\): give an IPv4 address or leave -4 out|lossprobe: -6 with the IPv4 address 127.0.0.1 "
                + "\\(--bind\\): give an IPv6 address or leave -6 out|lossprobe: -4 and -6 exclude each other: "
                + "give one");
        }
    }

    @Test
    void serveOnABusyPortNamesTheAddress() throws Exception {
        try (ServerSocket busy = new ServerSocket()) {
            busy.bind(new InetSocketAddress(InetAddress.getByName("::1"), 0));
            Path secret = secretFile("s", "a secret of some length, 32 bytes or more\n");
            RunCommandTest.Outcome o = execute("serve", "--bind", "::1", "--port", "" + busy.getLocalPort(),
                "--secret-file", secret.toString());
            assertThat(o.exit()).isEqualTo(1);
            assertThat(o.err().strip()).isEqualTo("lossprobe: cannot listen on [::1]:" + busy.getLocalPort()
                + ": the address is already in use (another lossprobe serve?)");
        }
    }

    @Test
    void anUnknownHostSaysUnknownHost() throws Exception {
        Path secret = secretFile("s", "a secret of some length, 32 bytes or more\n");
        RunCommandTest.Outcome o = execute("run", "--target", "no-such-host.invalid", "--secret-file",
            secret.toString(), "--transport", "udp", "-o", dir.resolve("r.json").toString());
        assertThat(o.exit()).isEqualTo(2);
        assertThat(o.err().strip()).isEqualTo("lossprobe: unknown host 'no-such-host.invalid'");
    }

    @Test
    void aWrongSecretHintsThatTheKeyFilesDiffer() throws Exception {
        Path mine = secretFile("mine", "the secret on this host, 32 bytes or more\n");
        try (ControlServer server = new ControlServer("127.0.0.1", 0,
                Auth.ofSecret("the secret on the server, 32 bytes or more"),
            ServerLimits.DEFAULTS, Transports::available, new PrintWriter(new StringWriter()))) {
            RunCommandTest.Outcome o = execute("run", "--target", "127.0.0.1:" + server.port(), "--secret-file",
                mine.toString(), "--transport", "udp", "--quiet", "-o", dir.resolve("r.json").toString());
            assertThat(o.exit()).isEqualTo(1);
            // The server proves itself first, so the controller is the one to find the secrets differ.
            assertThat(o.err().strip()).isEqualTo("lossprobe: lossprobe serve at 127.0.0.1:" + server.port()
                + " could not prove it knows the secret: do the secret files on the two hosts differ?");
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "{\"schemaVersion\": 2, \"steps\": \"none\"}|at steps: expected a list, found a string",
        "{\"schemaVersion\": 2, \"steps\": [{\"level\": {}}]}|at steps[0].level: expected a level, found an object",
        "{\"schemaVersion\": 2, \"plan\": [1]}|at plan: expected a plan, found a list",
    })
    void jacksonNeverReachesTheUser(String json, String expected) throws Exception {
        Path file = Files.writeString(dir.resolve("bad.json"), json);
        RunCommandTest.Outcome o = execute("report", "--format", "md", file.toString());
        assertThat(o.exit()).isEqualTo(2);
        assertThat(o.err().strip()).endsWith(expected).doesNotContain("`").doesNotContain("jackson")
            .doesNotContain("io.lossprobe").doesNotContain("java.");
    }
}
