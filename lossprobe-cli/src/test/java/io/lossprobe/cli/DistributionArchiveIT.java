package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The archive {@code mvn package} builds, as a new user meets it: unpacked, run by {@code bin/lossprobe} with a
 * bare Java runtime (made here with jlink from this JDK's modules, no compiler) as JAVA_HOME and a PATH that holds
 * only the few tools the launcher uses, so no JDK tool and no Maven can be reached. Runs after {@code package}
 * (failsafe), in {@code mvn verify}.
 */
@Tag("system")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DistributionArchiveIT {
    /** What lossprobe needs of the platform (jdeps --print-module-deps on the jar, less java.compiler). */
    private static final String MODULES = "java.base,java.desktop,java.management,java.sql,jdk.jfr,jdk.management,"
        + "jdk.unsupported";
    private Path target;
    private Path home;
    private Path jre;
    private Path path;

    @BeforeAll
    void unpack() throws Exception {
        target = Paths.get("target").toAbsolutePath();
        Path archive;
        try (Stream<Path> files = Files.list(target)) {
            archive = files.filter(f -> f.getFileName().toString().matches("lossprobe-.*\\.tar\\.gz")).findFirst()
                .orElseThrow(() -> new AssertionError("no lossprobe-VERSION.tar.gz in " + target));
        }
        Path dir = Files.createTempDirectory(target, "unpacked");
        assertThat(run(List.of("tar", "-xzf", archive.toString(), "-C", dir.toString()), Map.of()).exit()).isZero();
        try (Stream<Path> top = Files.list(dir)) {
            home = top.findFirst().orElseThrow();
        }
        assertThat(home.getFileName().toString()).isEqualTo(archive.getFileName().toString().replace(".tar.gz", ""));

        Path jlink = Paths.get(System.getProperty("java.home"), "bin", "jlink");
        assumeTrue(Files.isExecutable(jlink), "no jlink in " + System.getProperty("java.home"));
        jre = target.resolve("it-jre");
        if (!Files.isExecutable(jre.resolve("bin/java"))) {
            Exec made = run(List.of(jlink.toString(), "--add-modules", MODULES, "--no-header-files",
                "--no-man-pages", "--output", jre.toString()), Map.of());
            assertThat(made.exit()).as(made.output()).isZero();
        }
        assertThat(jre.resolve("bin/javac")).doesNotExist();
        // Only what bin/lossprobe uses; tar, mvn, java and javac stay out of reach.
        path = Files.createDirectories(dir.resolve("path"));
        for (String tool : List.of("sh", "readlink", "dirname", "sed")) {
            Path real = Stream.of("/bin", "/usr/bin").map(d -> Paths.get(d, tool)).filter(Files::isExecutable)
                .findFirst().orElseThrow();
            Files.createSymbolicLink(path.resolve(tool), real);
        }
    }

    record Exec(int exit, String output) {
    }

    private static Exec run(List<String> cmd, Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (!env.isEmpty()) {
            pb.environment().clear();
            pb.environment().putAll(env);
        }
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
        return new Exec(p.exitValue(), out);
    }

    private Map<String, String> jreOnly() {
        return Map.of("PATH", path.toString(), "JAVA_HOME", jre.toString(), "HOME", target.toString());
    }

    private Exec lossprobe(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(home.resolve("bin/lossprobe").toString()));
        cmd.addAll(List.of(args));
        return run(cmd, jreOnly());
    }

    @Test
    void holdsTheLauncherJarManPagesCompletionUnitsAndExamples() {
        assertThat(home.resolve("bin/lossprobe")).isExecutable();
        assertThat(home.resolve("bin/lossprobe-nightly")).isExecutable();
        assertThat(home.resolve("lib/lossprobe.jar")).isRegularFile();
        for (String page : List.of("lossprobe", "lossprobe-run", "lossprobe-serve", "lossprobe-mesh",
            "lossprobe-mesh-merge", "lossprobe-report", "lossprobe-check", "lossprobe-compare")) {
            assertThat(home.resolve("share/man/man1/" + page + ".1")).isRegularFile();
        }
        assertThat(home.resolve("share/bash-completion/completions/lossprobe")).isRegularFile();
        assertThat(home.resolve("share/zsh/lossprobe.zsh")).isRegularFile();
        for (String unit : List.of("lossprobe-serve.service", "lossprobe-mesh.service", "lossprobe-mesh.timer",
            "lossprobe-nightly.service", "lossprobe-nightly.timer")) {
            assertThat(home.resolve("systemd/" + unit)).isRegularFile();
        }
        assertThat(home.resolve("examples/policy.json")).isRegularFile();
        assertThat(home.resolve("docs/examples/policy.json")).as("where lossprobe-nightly looks").isRegularFile();
        assertThat(home.resolve("LICENSE")).isRegularFile();
        assertThat(home.resolve("CHANGELOG.md")).isRegularFile();
        assertThat(home.resolve("deploy/kubernetes")).isDirectory();
    }

    @Test
    void runsWithOnlyAJavaRuntime() throws Exception {
        Exec version = lossprobe("--version");
        assertThat(version.exit()).as(version.output()).isZero();
        assertThat(version.output().strip()).startsWith("lossprobe ").doesNotContain("unknown");
        Exec typo = lossprobe("rnu");
        assertThat(typo.exit()).isEqualTo(2);
        assertThat(typo.output().strip()).isEqualTo("lossprobe: unknown command 'rnu'; did you mean 'run'?");

        Path result = target.resolve("it-run.json");
        Exec embedded = lossprobe("run", "--transport", "udp", "--ports", "2", "--base-port", "45800", "--levels",
            "1k", "--duration", "300ms", "--warmup", "0", "--drain", "100ms", "--quiet", "-o", result.toString());
        assertThat(embedded.exit()).as(embedded.output()).isZero();
        assertThat(ResultFiles.read(result).status()).hasToString("complete");
    }

    @Test
    void serveAndRunTalkToEachOther() throws Exception {
        Path secret = Files.writeString(target.resolve("it-secret"), "a secret for the archive test\n");
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        ProcessBuilder pb = new ProcessBuilder(home.resolve("bin/lossprobe").toString(), "serve", "--bind",
            "127.0.0.1", "--port", "" + port, "--secret-file", secret.toString()).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(jreOnly());
        Process serve = pb.start();
        try {
            CountDownLatch listening = new CountDownLatch(1);
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(serve.getInputStream(),
                    StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        if (line.contains("listening on 127.0.0.1:" + port)) {
                            listening.countDown();
                        }
                    }
                } catch (IOException e) {
                    // serve ended
                }
            });
            reader.setDaemon(true);
            reader.start();
            assertThat(listening.await(60, TimeUnit.SECONDS)).as("serve started").isTrue();
            Path result = target.resolve("it-two.json");
            Exec run = lossprobe("run", "--target", "127.0.0.1:" + port, "--secret-file", secret.toString(),
                "--transport", "udp,tcp", "--ports", "2", "--base-port", "45820", "--levels", "1k", "--duration",
                "300ms", "--warmup", "0", "--drain", "100ms", "--quiet", "-o", result.toString());
            assertThat(run.exit()).as(run.output()).isZero();
            RunResult r = ResultFiles.read(result);
            assertThat(r.steps()).hasSize(2);
            assertThat(r.steps().get(0).receiverHostCounters()).as("counted on the server").isNotNull();
        } finally {
            serve.destroy();
            serve.waitFor(10, TimeUnit.SECONDS);
            serve.destroyForcibly();
        }
    }

    @Test
    void theManPageRendersAndCompletionCompletes() throws Exception {
        Path page = home.resolve("share/man/man1/lossprobe-mesh.1");
        if (new File("/usr/bin/man").canExecute()) {
            Exec man = run(List.of("/usr/bin/man", "-l", page.toString()), Map.of("PATH", "/usr/bin:/bin",
                "MANWIDTH", "100", "MANPAGER", "cat", "LANG", "C.UTF-8"));
            assertThat(man.exit()).as(man.output()).isZero();
            assertThat(man.output()).contains("LOSSPROBE-MESH(1)", "SYNOPSIS", "OPTIONS", "--start-at",
                "--hosts-file", "EXIT STATUS", "EXAMPLES");
        } else {
            assertThat(Files.readString(page)).contains(".TH \"LOSSPROBE-MESH\" \"1\"", "\\-\\-start\\-at");
        }
        Path bash = Paths.get("/bin/bash");
        assumeTrue(Files.isExecutable(bash), "no bash");
        Exec complete = run(List.of(bash.toString(), "-c", "source '"
            + home.resolve("share/bash-completion/completions/lossprobe") + "' 2>/dev/null; "
            + "COMP_WORDS=(lossprobe me); COMP_CWORD=1; COMP_LINE='lossprobe me'; COMP_POINT=12; "
            + "_complete_lossprobe lossprobe me lossprobe 2>/dev/null; echo \"[${COMPREPLY[*]}]\"; "
            + "COMP_WORDS=(lossprobe mesh --sta); COMP_CWORD=2; COMP_LINE='lossprobe mesh --sta'; COMP_POINT=20; "
            + "_complete_lossprobe lossprobe --sta mesh 2>/dev/null; echo \"[${COMPREPLY[*]}]\""), Map.of());
        assertThat(complete.output().strip().lines().toList()).containsExactly("[mesh]", "[--start-at]");
    }
}
