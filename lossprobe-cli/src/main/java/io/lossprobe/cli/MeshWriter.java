package io.lossprobe.cli;

import io.lossprobe.analysis.MeshFiles;
import io.lossprobe.analysis.MeshResult;
import io.lossprobe.analysis.MeshResult.Host;
import io.lossprobe.core.engine.EnvironmentProbe;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/** Rewrites the mesh file (atomically) as rounds finish, so a stopped mesh keeps what it measured. */
final class MeshWriter {
    private final Path file;
    private final List<Host> hosts;
    private final List<String> sources;
    private final MeshResult.Schedule schedule;
    private final String selection;
    private final String startedAt;
    private final PrintWriter out;
    private boolean failedOnce;

    MeshWriter(Path file, List<Host> hosts, List<String> sources, MeshResult.Schedule schedule, String selection,
               String startedAt, PrintWriter out) {
        this.file = file;
        this.hosts = hosts;
        this.sources = sources;
        this.schedule = schedule;
        this.selection = selection;
        this.startedAt = startedAt;
        this.out = out;
    }

    void write(List<MeshResult.Pair> pairs) {
        MeshResult mesh = new MeshResult(MeshResult.KIND, MeshResult.SCHEMA_VERSION, "lossprobe "
            + EnvironmentProbe.version(), startedAt, Instant.now().toString(), selection, hosts, sources,
            schedule, pairs);
        try {
            MeshFiles.write(file, mesh);
        } catch (IOException e) {
            if (!failedOnce) {
                synchronized (out) {
                    out.println("lossprobe: cannot write " + file + ": " + e.getMessage());
                }
            }
            failedOnce = true;
            if (pairs.isEmpty()) {
                throw new IllegalStateException("cannot write results to " + file + ": " + e.getMessage());
            }
        }
    }
}
