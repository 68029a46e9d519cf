package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Ctrl-C (SIGINT) on a real lossprobe process: the steps completed so far are written, exit code 130. */
@Tag("system")
class InterruptTest {
    @Test
    @Timeout(120)
    void ctrlCWritesTheCompletedStepsAndExits130(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("partial.json");
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        // env resets SIGINT to its default: a shell starts a background job (CI run with &, nohup) with SIGINT
        // ignored, its children inherit that, and a JVM keeps an ignored SIGINT ignored, so Ctrl-C would not reach
        // lossprobe at all (seen: all 10 steps ran and it exited 0).
        Process p = new ProcessBuilder("env", "--default-signal=INT", java, "--add-opens",
            "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp",
            System.getProperty("java.class.path"), Main.class.getName(), "run", "--transport", "udp", "--ports", "4",
            "--base-port", "45100", "--levels", "2k,2k,2k,2k,2k,2k,2k,2k,2k,2k", "--duration", "1s", "--warmup", "0",
            "--quiet", "-o", file.toString())
            .redirectErrorStream(true).redirectOutput(dir.resolve("out.txt").toFile()).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (completedSteps(file) < 1) {
                assertThat(p.isAlive()).as("lossprobe exited early: %s", output(dir)).isTrue();
                assertThat(System.nanoTime()).as("no step completed in time").isLessThan(deadline);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }
            new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor();
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(output(dir)).isEqualTo(130);
        } finally {
            p.destroyForcibly();
        }
        RunResult r = ResultFiles.read(file);
        assertThat(r.status()).hasToString("interrupted");
        assertThat(r.steps()).isNotEmpty().hasSizeLessThan(10);
        for (StepResult s : r.steps()) {
            assertThat(s.counts().received() + s.counts().lost()).isEqualTo(s.counts().sent());
            assertThat(s.counts().scheduled()).isEqualTo(2000);
        }
    }

    private static int completedSteps(Path file) {
        if (!Files.exists(file)) {
            return 0;
        }
        try {
            return ResultFiles.read(file).steps().size();
        } catch (IOException e) {
            return 0;
        }
    }

    private static String output(Path dir) throws IOException {
        Path out = dir.resolve("out.txt");
        return Files.exists(out) ? String.join("\n", Files.readAllLines(out)) : "";
    }

}
