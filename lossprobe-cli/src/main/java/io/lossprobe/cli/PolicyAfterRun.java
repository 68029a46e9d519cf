package io.lossprobe.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * {@code --policy} of {@code run} and {@code mesh}: the same check as {@code lossprobe check}, on the file just
 * written.
 */
final class PolicyAfterRun {
    @Option(names = "--policy", paramLabel = "POLICY.json",
        description = "After the ${COMMAND-NAME}, check the results against this policy (as 'lossprobe check'; a "
            + "mesh: every pair, and a pair that did not run fails); exit 1 if a limit fails.")
    Path policy;

    boolean given() {
        return policy != null;
    }

    /** A policy that cannot be read is bad usage, found before any traffic. */
    void requireReadable(CommandLine cl) {
        if (policy == null) {
            return;
        }
        Inputs.policy(cl, policy);
    }

    /**
     * Runs {@code lossprobe check} on {@code results}; its exit code is ours.
     *
     * @param more further options for the check (a baseline, a target label)
     */
    int check(CommandLine cl, Path results, CheckOutputs outputs, List<String> more) {
        List<String> args = new ArrayList<>(List.of("--policy", policy.toString()));
        args.addAll(more);
        outputs.addTo(args);
        args.add(results.toString());
        return cl.getParent().getSubcommands().get("check").execute(args.toArray(String[]::new));
    }
}
