package io.lossprobe.cli;

import io.lossprobe.core.engine.EnvironmentProbe;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code lossprobe}: the top-level command; the work is in its subcommands. */
@Command(name = "lossprobe", mixinStandardHelpOptions = true, versionProvider = LossprobeCommand.Version.class,
    description = "Measures how reliable raw UDP, TCP and Aeron are between two hosts as the message rate climbs.",
    subcommands = {RunCommand.class, ServeCommand.class, MeshCommand.class, KeygenCommand.class,
        OptionsCommand.class, ReportCommand.class, CompareCommand.class, CheckCommand.class,
        CommandLine.HelpCommand.class},
    footer = {"", "Exit codes: 0 ok, 1 runtime failure, 2 bad usage (an unknown command or option), 130 interrupted; "
        + "each command's page has its own.", "",
        "Example: lossprobe run --transport udp,tcp --levels 10k,100k -o result.json && lossprobe report result.json"})
public final class LossprobeCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: try 'lossprobe run'");
    }

    /** The configured command line: exit 2 for bad usage with one line, 1 for runtime failure, no stack traces. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new LossprobeCommand());
        cl.setParameterExceptionHandler((ex, args) -> {
            PrintWriter err = ex.getCommandLine().getErr();
            err.println("lossprobe: " + (ex instanceof CommandLine.UnmatchedArgumentException u
                ? Suggestions.describe(u) : ex.getMessage()));
            err.flush();
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            PrintWriter err = cmd.getErr();
            if (ex instanceof IllegalArgumentException) {
                err.println("lossprobe: " + ex.getMessage());
                err.flush();
                return 2;
            }
            err.println("lossprobe: " + describe(ex));
            err.flush();
            return 1;
        });
        return cl;
    }

    static String describe(Throwable ex) {
        String msg = ex.getMessage();
        return msg == null || msg.isBlank() ? ex.getClass().getSimpleName() : msg;
    }

    /** Prints the version from the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"lossprobe " + EnvironmentProbe.version()};
        }
    }
}
