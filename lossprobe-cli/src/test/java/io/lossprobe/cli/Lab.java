package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.SenderLimit;
import io.lossprobe.core.result.StepResult;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The namespace lab of scripts/lab.sh under a prefix of its own (lab.sh's LAB_PREFIX), so each lab test runs beside
 * the others: the test names the environment variable that picks its prefix, and the prefix when it is unset. Also
 * what the lab tests start in it: {@code lossprobe serve} in a namespace, and any command, to its end.
 */
final class Lab {
    /** The receiver's IPv4 address in scripts/lab.sh. */
    static final String RX = "198.18.0.1";
    /** The receiver's IPv6 address (scripts/lab.sh: the RFC 5180 benchmarking prefix). */
    static final String RX6 = "2001:2::1";

    private final Path script;
    private final String prefix;
    /** What {@link #serve} started, for {@link #down} to stop. */
    private final List<Process> serves = new ArrayList<>();

    /** A command's exit status and its output (stdout and stderr as one). */
    record Exec(int exit, String output) {
    }

    private Lab(Path script, String prefix) {
        this.script = script;
        this.prefix = prefix;
    }

    /**
     * The lab under the prefix {@code prefixVariable} names ({@code defaultPrefix} when unset), once the test may
     * run it: scripts/lab.sh there, root, and iproute2, nftables and {@code commands} on the PATH; skips the test
     * otherwise.
     */
    static Lab assumed(String prefixVariable, String defaultPrefix, String... commands) throws Exception {
        Path script = Paths.get("").toAbsolutePath().getParent().resolve("scripts/lab.sh");
        assumeTrue(Files.isExecutable(script), "scripts/lab.sh missing");
        assumeTrue("root".equals(System.getProperty("user.name")), "the lab needs root");
        List<String> needed = new ArrayList<>(List.of("ip", "nft"));
        needed.addAll(List.of(commands));
        String check = String.join(" && ", needed.stream().map(c -> "command -v " + c).toList());
        assumeTrue(exec("sh", "-c", check).exit() == 0, commands.length == 0 ? "the lab needs iproute2 and nftables"
            : "the lab needs iproute2, nftables and " + String.join(", ", commands));
        return new Lab(script, System.getenv().getOrDefault(prefixVariable, defaultPrefix));
    }

    /** The lab's namespace for {@code host} (rx, tx1, ctl, ...). */
    String ns(String host) {
        return prefix + host;
    }

    /** scripts/lab.sh with {@code labArgs}, on this lab. */
    Exec run(String... labArgs) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(script.toString()));
        cmd.addAll(List.of(labArgs));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("LAB_PREFIX", prefix);
        return exec(pb);
    }

    /**
     * {@code lossprobe serve --bind BIND} in the receiver's namespace for each of {@code binds}, with the secret in
     * {@code secret}; returns once every one is listening. {@link #down} stops them.
     */
    void serve(Path secret, String... binds) throws Exception {
        serveOn(secret, java.util.Arrays.stream(binds).map(bind -> Map.entry("rx", bind)).toList());
    }

    /**
     * {@code lossprobe serve --bind BIND} in each host's namespace, as (host, bind) pairs, all started at once;
     * returns once every one is listening. {@link #down} stops them.
     */
    void serveOn(Path secret, List<Map.Entry<String, String>> hostBinds) throws Exception {
        List<Process> started = new ArrayList<>();
        for (Map.Entry<String, String> hostBind : hostBinds) {
            started.add(startServe(ns(hostBind.getKey()), hostBind.getValue(), secret));
        }
        serves.addAll(started);
        for (Process p : started) {
            awaitListening(p);
        }
    }

    /** Stops the serves {@link #serve} started, then takes the lab down ({@code lab.sh down}). */
    void down() throws Exception {
        for (Process p : serves) {
            stop(p);
        }
        run("down");
    }

    /**
     * The lab's counters ({@code lab.sh counters}): its stdout, the JSON. What it says on stderr is kept apart (a
     * busy machine once had a line of it land inside the JSON) and shown when the JSON does not parse.
     */
    JsonNode counters() throws Exception {
        Path errors = Files.createTempFile("lab-counters", ".err");
        try {
            ProcessBuilder pb = new ProcessBuilder(script.toString(), "counters").redirectError(errors.toFile());
            pb.environment().put("LAB_PREFIX", prefix);
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
            try {
                return ResultFiles.mapper().readTree(out.strip());
            } catch (IOException e) {
                throw new AssertionError("lab.sh counters gave no JSON: " + out + " (stderr: "
                    + Files.readString(errors) + ")", e);
            }
        } finally {
            Files.deleteIfExists(errors);
        }
    }

    /**
     * The step's sender handed every one of its {@code scheduled} messages to the transport, or the step says why
     * not: a starved sender is a real condition (CI's machine runs a lab class beside the loopback tests), which the
     * step must report with its reason, and the loss accounting holds either way. Returns what was sent.
     */
    static long sentItsSchedule(StepResult step, long scheduled) {
        Counts c = step.counts();
        assertThat(c.scheduled()).as("scheduled").isEqualTo(scheduled);
        assertThat(c.sendFailed()).as("sends the host refused").isZero();
        assertThat(c.sent() + c.behind()).as("sent + behind").isEqualTo(scheduled);
        if (c.behind() > 0) {
            assertThat(step.senderLimit()).as("why the sender fell %d behind", c.behind()).isNotNull();
            assertThat(step.senderLimit().reason()).as("why the sender fell %d behind", c.behind())
                .isNotEqualTo(SenderLimit.Reason.NONE);
            System.out.printf("the sender fell %,d of %,d behind: %s%n", c.behind(), scheduled,
                step.senderLimit().reason());
        }
        return c.sent();
    }

    static Exec exec(String... cmd) throws Exception {
        return exec(List.of(cmd));
    }

    /** Runs {@code cmd} to its end (at most 5 minutes). */
    static Exec exec(List<String> cmd) throws Exception {
        return exec(new ProcessBuilder(cmd));
    }

    private static Exec exec(ProcessBuilder pb) throws Exception {
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        return new Exec(p.exitValue(), out);
    }

    /** The command line of lossprobe on this test's class path. */
    static List<String> java() {
        return List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(), "--add-opens",
            "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
            Main.class.getName());
    }

    /** {@code lossprobe serve --bind BIND} in namespace {@code ns}; {@link #awaitListening} waits for it. */
    static Process startServe(String ns, String bind, Path secret) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns));
        cmd.addAll(java());
        cmd.addAll(List.of("serve", "--bind", bind, "--secret-file", secret.toString()));
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    /** Reads the server's output to its end (on a thread of its own); returns once it says it is listening. */
    static void awaitListening(Process server) throws InterruptedException {
        awaitListening(server, "serve started");
    }

    /** {@link #awaitListening(Process)}, failing as {@code started} when it never says so. */
    static void awaitListening(Process server, String started) throws InterruptedException {
        CountDownLatch listening = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(server.getInputStream(),
                StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.contains("listening on")) {
                        listening.countDown();
                    }
                }
            } catch (IOException e) {
                // The server ended.
            }
        });
        reader.setDaemon(true);
        reader.start();
        assertThat(listening.await(60, TimeUnit.SECONDS)).as(started).isTrue();
    }

    private static void stop(Process server) throws InterruptedException {
        server.destroy();
        server.waitFor(10, TimeUnit.SECONDS);
        server.destroyForcibly();
    }

    /** The IP and UDP headers of a datagram as nftables counts it: 20 + 8 over IPv4, 40 + 8 over IPv6. */
    static int udpHeaderBytes(String target) {
        return target.indexOf(':') >= 0 ? 48 : 28;
    }
}
