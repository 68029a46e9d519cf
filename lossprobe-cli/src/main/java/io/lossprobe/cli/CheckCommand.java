package io.lossprobe.cli;

import io.lossprobe.analysis.CheckReport;
import io.lossprobe.analysis.JUnitXml;
import io.lossprobe.analysis.LoadedResult;
import io.lossprobe.analysis.Policy;
import io.lossprobe.analysis.PolicyCheck;
import io.lossprobe.analysis.PrometheusTextfile;
import io.lossprobe.analysis.RunLabels;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code lossprobe check}: a run against a policy's thresholds and an optional baseline; exit 1 when one fails. */
@Command(name = "check",
    description = {"Checks a result against a policy: per transport and level, max loss %%, min achieved rate, "
        + "max p99 delay, max retransmits and NAKs per 1k messages, and regression against a baseline result.",
        "The policy is JSON; see docs/check.md and docs/examples/policy.json."},
    footer = {"", "Exit codes: 0 every limit held, 1 a limit failed (each failure is printed), "
        + "2 bad usage or unreadable input (malformed JSON, newer schema, unknown policy key).", "",
        "Example: lossprobe check --policy /etc/lossprobe/policy.json --prometheus "
            + "/var/lib/prometheus/node-exporter/lossprobe.prom result.json"})
public final class CheckCommand extends Subcommand {
    @Option(names = "--policy", required = true, paramLabel = "POLICY.json", description = "The policy file.")
    Path policyFile;

    @Parameters(index = "0", paramLabel = "RESULTS.json", description = "The result file to check, or a mesh file "
        + "(every pair is checked; one that did not run fails).")
    Path resultFile;

    @CommandLine.Mixin
    BaselineOption baseline;

    @CommandLine.Mixin
    CheckOutputs outputs;

    @Option(names = "--target-label", paramLabel = "HOST",
        description = "The textfile's target label. Default: from the result (the --target host of a forward run, "
            + "'local' for a run on one host, 'remote' for a --reverse run, whose file does not name the server).")
    String targetLabel;

    @CommandLine.Mixin
    QuietOption quiet;

    @Override
    int run(CommandLine cl) throws Exception {
        Path prometheus = outputs.prometheus;
        Path junit = outputs.junit;
        boolean quiet = this.quiet.quiet;
        outputs.requireWritable(cl);
        outputs.requireNotInput(cl, java.util.Arrays.asList(resultFile, policyFile, baseline.baseline));
        Policy policy = Inputs.policy(cl, policyFile);
        if (MeshOutputs.isMesh(java.util.List.of(resultFile))) {
            return MeshOutputs.check(cl, policy, resultFile, baseline.baseline, outputs, quiet);
        }
        LoadedResult run = Inputs.read(cl, resultFile);
        Optional<LoadedResult> against = Optional.empty();
        Path base = baseline.baseline;
        if (base == null && policy.baseline() != null && policy.baseline().file() != null) {
            Path dir = policyFile.toAbsolutePath().getParent();
            base = dir == null ? Path.of(policy.baseline().file()) : dir.resolve(policy.baseline().file());
        }
        if (base != null) {
            against = Optional.of(Inputs.read(cl, base));
        }
        CheckReport report = new PolicyCheck(policy).check(run, against);
        if (prometheus != null) {
            PrometheusTextfile.write(prometheus, run, RunLabels.of(run.run()).withTarget(targetLabel), outputs.name,
                Optional.of(report));
        }
        if (junit != null) {
            JUnitXml.write(junit, report);
        }
        PrintWriter out = cl.getOut();
        for (CheckReport.Evaluation e : report.evaluations()) {
            if (!e.passed()) {
                out.println("FAIL " + e.message());
            } else if (!quiet) {
                out.println("ok   " + e.message());
            }
        }
        if (report.passed()) {
            if (!quiet) {
                out.println("check passed: " + report.evaluations().size() + " limit(s) held for " + resultFile);
            }
        } else {
            out.println("check FAILED: " + report.failures().size() + " of " + report.evaluations().size()
                + " limit(s) broken in " + resultFile);
        }
        out.flush();
        return report.passed() ? 0 : 1;
    }
}
