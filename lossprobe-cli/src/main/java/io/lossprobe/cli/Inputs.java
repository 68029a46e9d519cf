package io.lossprobe.cli;

import io.lossprobe.analysis.InputException;
import io.lossprobe.analysis.LoadedResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import picocli.CommandLine;

/** Shared by the analysis commands: input problems become bad usage (exit 2, one line). */
final class Inputs {
    private Inputs() {
    }

    static LoadedResult read(CommandLine cl, Path file) {
        try {
            return LoadedResult.read(file);
        } catch (InputException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
    }

    static List<LoadedResult> readAll(CommandLine cl, List<Path> files, Consumer<String> progress) {
        try {
            return LoadedResult.readAll(files, progress);
        } catch (InputException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
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
