package io.lossprobe.cli;

import io.lossprobe.analysis.HtmlReport;
import io.lossprobe.analysis.LoadedResult;
import io.lossprobe.analysis.Policy;
import io.lossprobe.analysis.ReceiverMatrix;
import io.lossprobe.analysis.SummaryTable;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code lossprobe report}: one HTML page (or a Markdown / CSV table) over one or many result files. */
@Command(name = "report",
    description = {"Draws a self-contained HTML report (charts as inline SVG, no network needed) or prints the "
        + "summary table as Markdown or CSV.",
        "With several result files the report adds the trend over time (by each run's start)."},
    footer = {"", "Exit codes: 0 ok, 1 runtime failure, 2 bad usage or unreadable input.", "",
        "Example: lossprobe report -o report.html result.json", "",
        "Example: lossprobe report --policy /etc/lossprobe/policy.json -o trend.html history/*/lossprobe-*.json"})
public final class ReportCommand extends Subcommand {
    /** What --format takes. */
    static final List<String> FORMATS = List.of("html", "md", "csv");

    @Parameters(arity = "1..*", paramLabel = "RESULTS.json", description = "Result files of lossprobe run, or the "
        + "mesh file(s) of lossprobe mesh (drawn as source-by-destination matrices).")
    List<Path> files;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE",
        description = "Where to write. Default: lossprobe-report.html for html, standard output for md and csv.")
    Path output;

    @Option(names = "--format", defaultValue = "html", paramLabel = "FORMAT",
        completionCandidates = CompletionValues.ReportFormats.class,
        description = "html, md or csv. Default: ${DEFAULT-VALUE}.")
    String format;

    @Option(names = "--policy", paramLabel = "POLICY.json",
        description = "Check every run against this policy (as 'lossprobe check', without baseline): the verdict "
            + "leads with the newest run's check, the trend marks failed checks.")
    Path policyFile;

    @CommandLine.Mixin
    QuietOption quietOption;

    @Override
    int run(CommandLine cl) throws Exception {
        boolean quiet = quietOption.quiet;
        String fmt = format.toLowerCase(java.util.Locale.ROOT);
        if (!FORMATS.contains(fmt)) {
            throw new CommandLine.ParameterException(cl, "--format must be html, md or csv, got '" + format + "'");
        }
        Path out = output == null && fmt.equals("html") ? Path.of("lossprobe-report.html") : output;
        Inputs.requireWritable(cl, out, "report");
        List<Path> inputs = new java.util.ArrayList<>(files);
        inputs.add(policyFile);
        Inputs.requireNotInput(cl, out, inputs);
        if (MeshOutputs.isMesh(files)) {
            return MeshOutputs.report(cl, files, fmt, out, quiet);
        }
        Optional<Policy> policy = policyFile == null ? Optional.empty() : Optional.of(Inputs.policy(cl, policyFile));
        PrintWriter err = cl.getErr();
        long t0 = System.nanoTime();
        Consumer<String> progress = quiet ? m -> { } : m -> {
            err.println("lossprobe report: " + m);
            err.flush();
        };
        List<LoadedResult> results = Inputs.readAll(cl, files, files.size() > 10 ? progress : m -> { });
        String text = switch (fmt) {
            case "md" -> ReceiverMatrix.reportMarkdown(results);
            case "csv" -> SummaryTable.of(results).csv();
            default -> HtmlReport.render(results, policy, files.size() > 10 ? progress : m -> { });
        };
        if (out == null) {
            cl.getOut().print(text);
            cl.getOut().flush();
            return 0;
        }
        io.lossprobe.core.result.ResultFiles.writeAtomically(out, text.getBytes(StandardCharsets.UTF_8));
        if (!quiet) {
            cl.getOut().printf("report of %d run(s) written to %s in %.1fs%n", results.size(), out,
                (System.nanoTime() - t0) / 1e9);
            cl.getOut().flush();
        }
        return 0;
    }
}
