package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** {@code scripts/lab.sh} and the commands run in its namespaces, for a lab test of one prefix; each bounded. */
record LabScript(Path repo, String prefix) {
    record Exec(int exit, String output) {
    }

    /** {@code cmd} with the lab's prefix in its environment, its output and error together, within 5 minutes. */
    Exec exec(List<String> cmd) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("LAB_PREFIX", prefix);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        return new Exec(p.exitValue(), out);
    }

    /** {@code scripts/lab.sh ARGS...}. */
    Exec lab(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(repo.resolve("scripts/lab.sh").toString()));
        cmd.addAll(List.of(args));
        return exec(cmd);
    }
}
