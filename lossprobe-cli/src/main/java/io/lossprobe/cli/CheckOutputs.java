package io.lossprobe.cli;

import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The files a policy check (and a run's numbers) can be written to, for monitoring and CI: {@code --prometheus} and
 * {@code --junit}. Shared by {@code run}, {@code mesh} and {@code check}; run and mesh hand them to the check they
 * run after themselves.
 */
final class CheckOutputs {
    @Option(names = "--prometheus", paramLabel = "FILE",
        description = "Write the run's numbers (a mesh: this host's pairs, lossprobe_mesh_* labelled by source and "
            + "target) and the policy check's outcome as a Prometheus textfile for node_exporter's textfile collector "
            + "(atomically; name it *.prom). A run writes it also when it fails or is interrupted.")
    Path prometheus;

    @Option(names = "--junit", paramLabel = "FILE",
        description = "Write the policy check's outcome as JUnit XML (needs a policy).")
    Path junit;

    /** Both files can be written: checked before any traffic, so a typo does not cost a run. */
    void requireWritable(CommandLine cl) {
        Inputs.requireWritable(cl, prometheus, "--prometheus");
        Inputs.requireWritable(cl, junit, "--junit");
    }

    /**
     * These and the command's own {@code outputs} are none of {@code inputs} (check's result, policy and baseline;
     * a run's policy, baseline and secret; a mesh's hosts file; null entries are options not given): writing one
     * would replace it.
     */
    void requireNotInput(CommandLine cl, List<Path> inputs, Path... outputs) {
        List<Path> all = new java.util.ArrayList<>(java.util.Arrays.asList(outputs));
        all.add(prometheus);
        all.add(junit);
        Inputs.requireNotInputs(cl, all, inputs);
    }

    /** The options as {@code lossprobe check} takes them. */
    void addTo(List<String> args) {
        if (prometheus != null) {
            args.addAll(List.of("--prometheus", prometheus.toString()));
        }
        if (junit != null) {
            args.addAll(List.of("--junit", junit.toString()));
        }
    }
}
