package io.lossprobe.cli;

import io.lossprobe.analysis.Comparison;
import io.lossprobe.analysis.LoadedResult;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code lossprobe compare A B}: two runs side by side per transport and level, regressions flagged. */
@Command(name = "compare", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Shows two runs side by side per transport and level: loss %%, achieved rate and p99 delay, "
        + "with deltas. A row is a REGRESSION when B's loss rose, its achieved rate fell or its p99 rose beyond "
        + "the tolerances."},
    footer = {"", "Exit codes: 0 ok (regressions are printed), 1 regression with --fail-on-regression, "
        + "2 bad usage or unreadable input."})
public final class CompareCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "A.json", description = "The earlier (baseline) result.")
    Path a;

    @Parameters(index = "1", paramLabel = "B.json", description = "The later result.")
    Path b;

    @Option(names = "--loss-tolerance", defaultValue = "0.1", paramLabel = "POINTS",
        description = "Loss %% may rise by this many percentage points. Default: ${DEFAULT-VALUE}.")
    double lossPoints;

    @Option(names = "--achieved-tolerance", defaultValue = "5", paramLabel = "PERCENT",
        description = "The achieved rate may fall by this %%. Default: ${DEFAULT-VALUE}.")
    double achievedPercent;

    @Option(names = "--p99-tolerance", defaultValue = "50", paramLabel = "PERCENT",
        description = "p99 delay may rise by this %%. Default: ${DEFAULT-VALUE}.")
    double p99Percent;

    @Option(names = "--fail-on-regression", description = "Exit 1 when any row regressed.")
    boolean failOnRegression;

    @Override
    public Integer call() {
        CommandLine cl = spec.commandLine();
        Comparison.Tolerance tolerance;
        try {
            tolerance = new Comparison.Tolerance(lossPoints, achievedPercent, p99Percent);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
        LoadedResult ra = Inputs.read(cl, a);
        LoadedResult rb = Inputs.read(cl, b);
        Comparison c = Comparison.of(ra, rb, tolerance);
        PrintWriter out = cl.getOut();
        out.println("A: " + a + " (started " + ra.run().startedAt() + ")");
        out.println("B: " + b + " (started " + rb.run().startedAt() + ")");
        out.print(c.table());
        long regressed = c.rows().stream().filter(Comparison.Row::regressed).count();
        out.println(regressed == 0 ? "no regressions" : regressed + " row(s) regressed");
        out.flush();
        return failOnRegression && regressed > 0 ? 1 : 0;
    }
}
