package io.lossprobe.cli;

import io.lossprobe.analysis.InputException;
import io.lossprobe.analysis.LoadedResult;
import io.lossprobe.analysis.MeshFiles;
import io.lossprobe.analysis.MeshResult;
import io.lossprobe.analysis.Policy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import picocli.CommandLine;

/** Shared by the analysis commands: input problems become bad usage (exit 2, one line). */
final class Inputs {
    private Inputs() {
    }

    /** Reads user input; it may refuse it (malformed, newer schema, unknown key). */
    @FunctionalInterface
    interface Reader<T> {
        T read() throws InputException;
    }

    /** What {@code reader} reads; input it refuses is bad usage, one line. */
    static <T> T readOrBadUsage(CommandLine cl, Reader<T> reader) {
        try {
            return reader.read();
        } catch (InputException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
    }

    static LoadedResult read(CommandLine cl, Path file) {
        return readOrBadUsage(cl, () -> LoadedResult.read(file));
    }

    static List<LoadedResult> readAll(CommandLine cl, List<Path> files, Consumer<String> progress) {
        return readOrBadUsage(cl, () -> LoadedResult.readAll(files, progress));
    }

    static Policy policy(CommandLine cl, Path file) {
        return readOrBadUsage(cl, () -> Policy.read(file));
    }

    /** One mesh of a source's file or several (merged). */
    static MeshResult mesh(CommandLine cl, List<Path> files) {
        return readOrBadUsage(cl, () -> MeshFiles.readAll(files));
    }

    /**
     * Refuses to write over an input: {@code report in.json -o in.json} would replace the result with its own
     * report. Compares real paths where the output exists (symbolic and hard links), else normalised absolute ones.
     */
    static void requireNotInput(CommandLine cl, Path out, List<Path> inputs) {
        requireNotInputs(cl, java.util.Collections.singletonList(out), inputs);
    }

    /**
     * No output of a command is one of its inputs (results, policy, baseline, secret, hosts file, ...), by any
     * name or link: writing it would replace the input. Null entries are options not given, {@code -} is stdout.
     * Checked before any work (a run's traffic), as exit 2 and one line.
     */
    static void requireNotInputs(CommandLine cl, List<Path> outputs, List<Path> inputs) {
        for (Path out : outputs) {
            if (out == null || out.toString().equals("-")) {
                continue;
            }
            for (Path in : inputs) {
                if (in != null && sameFile(out, in)) {
                    throw new CommandLine.ParameterException(cl, "refusing to write " + out + " over the input "
                        + in + "; choose another output file");
                }
            }
        }
    }

    private static boolean sameFile(Path a, Path b) {
        try {
            if (Files.exists(a) && Files.exists(b)) {
                return Files.isSameFile(a, b);
            }
        } catch (java.io.IOException e) {
            // Unreadable: fall back to comparing names.
        }
        return a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize());
    }

    /** Refuses an output path whose directory does not exist, before any work is done. */
    static void requireWritable(CommandLine cl, Path out, String option) {
        if (out == null) {
            return;
        }
        Path parent = out.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw new CommandLine.ParameterException(cl, "cannot write " + option + " " + out
                + ": no such directory " + parent);
        }
        if (Files.isDirectory(out)) {
            throw new CommandLine.ParameterException(cl, "cannot write " + option + " " + out + ": is a directory");
        }
        if (parent != null && !Files.isWritable(parent)) {
            throw new CommandLine.ParameterException(cl, "cannot write " + option + " " + out
                + ": directory not writable");
        }
    }
}
