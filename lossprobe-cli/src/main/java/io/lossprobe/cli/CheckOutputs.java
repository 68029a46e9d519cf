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

    @Option(names = "--name", paramLabel = "NAME",
        description = "The textfile's name label, telling this job's series from another's in one textfile directory "
            + "(e.g. the systemd unit's name). Default: plan- and 8 hex digits of the plan's SHA-256 (a mesh: mesh- "
            + "and those of its host list), the same every time the same command runs.")
    String name;

    @Option(names = "--junit", paramLabel = "FILE",
        description = "Write the policy check's outcome as JUnit XML (needs a policy).")
    Path junit;

    /** Both files can be written, the name is not blank: checked before any traffic, so a typo costs no run. */
    void requireWritable(CommandLine cl) {
        if (name != null && name.isBlank()) {
            throw new CommandLine.ParameterException(cl, "--name must not be blank");
        }
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
        if (name != null) {
            args.addAll(List.of("--name", name));
        }
    }
}
