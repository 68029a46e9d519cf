package io.lossprobe.cli;

import io.lossprobe.analysis.MeshFiles;
import io.lossprobe.analysis.MeshResult;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code lossprobe mesh merge}: the files each source host wrote, joined into one mesh file. */
@Command(name = "merge",
    description = {"Joins the files that 'lossprobe mesh' wrote on each source host into one mesh file. A planned "
        + "pair whose source sent no file is kept as 'missing'.",
        "'lossprobe report' and 'lossprobe check' also accept the unmerged files."},
    footer = {"", "Exit codes: 0 merged, 1 runtime failure, 2 bad usage, unreadable input or files of different "
        + "meshes.", "", "Example: lossprobe mesh merge -o mesh.json rack1-a.json rack1-b.json"})
final class MeshMergeCommand extends Subcommand {
    @Parameters(arity = "1..*", paramLabel = "MESH.json", description = "The sources' mesh files.")
    List<Path> files;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE", description = "The merged file.")
    Path output;

    @Override
    int run(CommandLine cl) throws Exception {
        Inputs.requireWritable(cl, output, "the merged mesh to");
        Inputs.requireNotInput(cl, output, files);
        MeshResult merged = Inputs.mesh(cl, files);
        MeshFiles.write(output, merged);
        Map<String, Integer> byStatus = new TreeMap<>();
        merged.pairs().forEach(p -> byStatus.merge(p.status(), 1, Integer::sum));
        cl.getOut().printf("merged %d file(s): %d pairs (%s) -> %s%n", files.size(), merged.pairs().size(),
            String.join(", ", byStatus.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).toList()),
            output);
        cl.getOut().flush();
        return 0;
    }
}
