package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.testing.Scratch;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real lossprobe process with its own small /dev/shm (a tmpfs mounted in a private mount namespace, so the
 * machine's /dev/shm is never touched): the embedded Aeron driver's leftovers of dead processes are removed, a
 * live process's kept, and a /dev/shm too small fails the run with exit 1, one line, status failed, nothing left.
 */
@Tag("system")
class AeronSharedMemoryTest {
    /** Above the kernel's largest possible pid_max (2^22): never a live process. */
    private static final long DEAD_PID = (1L << 22) + 1;
    private static final String MARK = "--- /dev/shm after the run:";

    record Outcome(int exit, List<String> lines, List<String> shmAfter) {
    }

    @Test
    @Timeout(120)
    void aSharedMemoryTooSmallForTheDriverFailsTheRunCleanlyAndLeftoversOfTheDeadGo(@TempDir Path dir)
        throws Exception {
        Path file = dir.resolve("r.json");
        Outcome o = runWithSharedMemory(dir, "8m", file, 46800);

        assertThat(o.exit()).as(String.join("\n", o.lines())).isEqualTo(1);
        assertThat(errorLines(o)).singleElement().asString().matches("lossprobe: no room for the Aeron media driver's "
            + "files in /dev/shm \\(\\d+ MiB free\\): free some, or attach to a running driver with -X aeron.dir=DIR");
        RunResult r = ResultFiles.read(file);
        assertThat(r.status()).hasToString("failed");
        assertThat(r.error()).contains("no room for the Aeron media driver's files");
        // The dead process's directory went at the start, the live shell's stayed, the failed driver's is gone.
        assertThat(o.shmAfter()).containsExactly("live");
    }

    @Test
    @Timeout(120)
    void aSharedMemoryTooSmallForTheTermBuffersFailsTheRunCleanly(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("r.json");
        // 16 MiB terms: one flow's log (3 terms) alone is 48 MiB, more than remains beside the driver's own files.
        Outcome o = runWithSharedMemory(dir, "64m", file, 46810, "-X", "aeron.termLength=16m");

        assertThat(o.exit()).as(String.join("\n", o.lines())).isEqualTo(1);
        assertThat(errorLines(o)).singleElement().asString()
            .startsWith("lossprobe: no room for the Aeron term buffers in /dev/shm (")
            .contains("each flow's log takes 3 x aeron.termLength = 49152 KiB at each end");
        assertThat(ResultFiles.read(file).status()).hasToString("failed");
        assertThat(o.shmAfter()).containsExactly("live");
    }

    private static List<String> errorLines(Outcome o) {
        return o.lines().stream().filter(l -> !l.startsWith("lossprobe: aeron over") && !l.startsWith("proto"))
            .toList();
    }

    /**
     * Runs lossprobe with /dev/shm a tmpfs of {@code size} holding a dead process's driver directory and a live
     * one's (the shell that starts lossprobe, alive throughout), and lists /dev/shm after it exits ("live" for the
     * live one's directory, anything else by name).
     */
    private static Outcome runWithSharedMemory(Path dir, String size, Path results, int basePort, String... extra)
        throws Exception {
        Scratch.assumeRoot();
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/unshare")), "needs unshare (util-linux)");
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        StringBuilder command = new StringBuilder("'" + java
                + "' --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -cp '" + System.getProperty("java.class.path")
            + "' " + Main.class.getName() + " run --transport aeron --ports 2 --base-port " + basePort
            + " --levels 1k --duration 200ms --warmup 0 --drain 100ms --quiet -o '" + results + "'");
        for (String e : extra) {
            command.append(" '").append(e).append("'");
        }
        String prefix = "/dev/shm/lossprobe-aeron-";
        String script = "set -e; mount -t tmpfs -o size=" + size + " lossprobe-test /dev/shm;"
            + " mkdir " + prefix + DEAD_PID + "-1 " + prefix + "$$-1-00000000;"
            + " head -c 4096 /dev/zero > " + prefix + DEAD_PID + "-1/cnc.dat;"
            + " set +e; " + command + " 2>&1; rc=$?;"
            + " echo '" + MARK + "'; ls /dev/shm | sed \"s/^lossprobe-aeron-$$-1-00000000$/live/\"; exit $rc";
        Path out = dir.resolve("out.txt");
        Process p = new ProcessBuilder("unshare", "--mount", "--propagation", "private", "sh", "-c", script)
            .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("lossprobe finished").isTrue();
        } finally {
            p.destroyForcibly();
        }
        List<String> all = Files.readAllLines(out);
        int mark = all.indexOf(MARK);
        assertThat(mark).as(String.join("\n", all)).isNotNegative();
        return new Outcome(p.exitValue(), all.subList(0, mark), all.subList(mark + 1, all.size()));
    }
}
