package io.lossprobe.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * What every lossprobe subcommand shares, declared once: {@code --help} and {@code --version}, options listed in
 * the order they are declared, and its own {@code CommandLine} (for output and usage errors) handed to {@link #run}.
 */
@Command(mixinStandardHelpOptions = true, sortOptions = false)
abstract class Subcommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public final Integer call() throws Exception {
        return run(spec.commandLine());
    }

    /** The command's work; returns its exit code. */
    abstract int run(CommandLine cl) throws Exception;
}
