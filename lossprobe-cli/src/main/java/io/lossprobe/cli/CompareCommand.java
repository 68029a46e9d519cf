package io.lossprobe.cli;

import io.lossprobe.analysis.Comparison;
import io.lossprobe.analysis.ComparisonReport;
import io.lossprobe.analysis.LoadedResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code lossprobe compare A B}: two runs side by side per transport and level, regressions flagged. */
@Command(name = "compare",
    description = {"Shows two runs side by side per transport and level: loss %%, achieved rate and p99 delay, "
        + "with deltas and a verdict. A row is a REGRESSION when B's loss rose, its achieved rate fell or its p99 "
        + "rose beyond the tolerances. Warns loudly when the plans differ (ports, sizes, durations, transports, "
        + "levels, options, hosts).",
        "Formats: text (100 columns), md, json, html (A and B loss curves and delay bands overlaid)."},
    footer = {"", "Exit codes: 0 ok (regressions are printed), 1 regression with --fail-on-regression, "
        + "2 bad usage or unreadable input.", "",
        "Example: lossprobe compare --format md --fail-on-regression baseline.json result.json"})
public final class CompareCommand extends Subcommand {
    /** What --format takes. */
    static final List<String> FORMATS = List.of("text", "md", "json", "html");

    @Parameters(index = "0", paramLabel = "A.json", description = "The earlier (baseline) result.")
    Path a;

    @Parameters(index = "1", paramLabel = "B.json", description = "The later result.")
    Path b;

    @Option(names = "--format", defaultValue = "text", paramLabel = "FORMAT",
        completionCandidates = CompletionValues.CompareFormats.class,
        description = "text, md, json or html. Default: ${DEFAULT-VALUE}.")
    String format;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "Write to FILE instead of standard output.")
    Path output;

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
    int run(CommandLine cl) throws Exception {
        String fmt = format.toLowerCase(Locale.ROOT);
        if (!FORMATS.contains(fmt)) {
            throw new CommandLine.ParameterException(cl, "--format must be text, md, json or html, got '" + format
                + "'");
        }
        Comparison.Tolerance tolerance;
        try {
            tolerance = new Comparison.Tolerance(lossPoints, achievedPercent, p99Percent);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
        Inputs.requireWritable(cl, output, "compare");
        Inputs.requireNotInput(cl, output, List.of(a, b));
        LoadedResult ra = Inputs.read(cl, a);
        LoadedResult rb = Inputs.read(cl, b);
        ComparisonReport report = new ComparisonReport(ra, rb, tolerance);
        String text = switch (fmt) {
            case "md" -> report.markdown();
            case "json" -> report.json();
            case "html" -> report.html();
            default -> report.text();
        };
        if (output == null) {
            cl.getOut().print(text);
        } else {
            io.lossprobe.core.result.ResultFiles.writeAtomically(output, text.getBytes(StandardCharsets.UTF_8));
            cl.getOut().println("comparison written to " + output + ": " + report.verdict());
        }
        if (report.diff().plansDiffer() && !fmt.equals("text")) {
            // The warning is in the output; a file nobody opens yet should not hide it.
            cl.getErr().println("lossprobe: warning: the plans differ (" + String.join("; ", report.diff().plan())
                + ")");
        }
        cl.getOut().flush();
        cl.getErr().flush();
        return failOnRegression && report.comparison().anyRegression() ? 1 : 0;
    }
}
