package io.lossprobe.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * What every lossprobe subcommand shares, declared once: {@code --help} and {@code --version}, options listed in
 * the order they are declared, and the command's own spec (its {@code CommandLine} for output and usage errors).
 */
@Command(mixinStandardHelpOptions = true, sortOptions = false)
abstract class Subcommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;
}
