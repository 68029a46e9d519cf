package io.lossprobe.cli;

import io.lossprobe.analysis.MeshCheck;
import io.lossprobe.analysis.MeshFiles;
import io.lossprobe.analysis.MeshPrometheus;
import io.lossprobe.analysis.MeshReport;
import io.lossprobe.analysis.MeshResult;
import io.lossprobe.analysis.Policy;
import io.lossprobe.core.result.ResultFiles;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;

/** {@code report} and {@code check} when their input is a mesh file (see {@link MeshCommand}). */
final class MeshOutputs {
    private MeshOutputs() {
    }

    /** True when the first input is a mesh file: the command hands over to this class. */
    static boolean isMesh(List<Path> files) {
        return !files.isEmpty() && MeshFiles.isMesh(files.get(0));
    }

    /** The matrix report of one mesh (its sources' files are merged first). */
    static int report(CommandLine cl, List<Path> files, String format, Path out, boolean quiet) throws IOException {
        MeshResult mesh = Inputs.mesh(cl, files);
        MeshReport report = MeshReport.of(mesh);
        String text = switch (format) {
            case "md" -> report.markdown();
            case "csv" -> report.csv();
            default -> report.html();
        };
        if (out == null) {
            cl.getOut().print(text);
            cl.getOut().flush();
            return 0;
        }
        ResultFiles.writeAtomically(out, text.getBytes(StandardCharsets.UTF_8));
        if (!quiet) {
            cl.getOut().printf("mesh report of %d hosts, %d pairs written to %s%n", mesh.hosts().size(),
                mesh.pairs().size(), out);
            cl.getOut().flush();
        }
        return 0;
    }

    /** Every pair of a mesh against the policy: exit 0 when all held, 1 when one broke a limit or did not run. */
    static int check(CommandLine cl, Policy policy, Path file, Path baseline, CheckOutputs outputs, boolean quiet)
        throws IOException {
        Path prometheus = outputs.prometheus;
        Path junit = outputs.junit;
        if (baseline != null) {
            throw new CommandLine.ParameterException(cl, "--baseline is not supported for mesh files yet");
        }
        MeshResult mesh = Inputs.mesh(cl, List.of(file));
        MeshCheck.Outcome outcome = new MeshCheck(policy).check(mesh);
        if (prometheus != null) {
            MeshPrometheus.write(prometheus, mesh, outputs.name, Optional.of(outcome));
        }
        if (junit != null) {
            ResultFiles.writeAtomically(junit, MeshCheck.junit(outcome).getBytes(StandardCharsets.UTF_8));
        }
        PrintWriter out = cl.getOut();
        for (MeshCheck.PairCheck p : outcome.pairs()) {
            if (p.report() == null) {
                out.println("FAIL " + p.label() + " " + p.problem());
                continue;
            }
            p.report().evaluations().stream().filter(e -> !quiet || !e.passed())
                .forEach(e -> out.println((e.passed() ? "ok   " : "FAIL ") + p.label() + " " + e.message()));
        }
        int failed = outcome.failures().size();
        if (failed == 0) {
            if (!quiet) {
                out.println("mesh check passed: " + outcome.pairs().size() + " pair(s) held every limit in " + file);
            }
        } else {
            out.println("mesh check FAILED: " + failed + " of " + outcome.pairs().size() + " pair(s) broke a limit or "
                + "did not run in " + file);
        }
        out.flush();
        return failed == 0 ? 0 : 1;
    }
}
