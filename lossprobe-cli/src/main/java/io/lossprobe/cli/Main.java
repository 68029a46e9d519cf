package io.lossprobe.cli;

/** Entry point of the runnable jar. */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.exit(exitCode(() -> LossprobeCommand.commandLine().execute(args), System.err));
    }

    /**
     * The command's exit code; 1, with one line on {@code err}, when it ends in an {@link Error} or an exception
     * picocli let through. The process then still exits: an embedded Aeron driver's and client's threads are not
     * daemons, and a run whose main thread died of a {@code NoClassDefFoundError} (its jar replaced under it) kept
     * its process, and its driver, alive until killed.
     */
    static int exitCode(java.util.concurrent.Callable<Integer> command, java.io.PrintStream err) {
        try {
            return command.call();
        } catch (Throwable t) {
            err.println("lossprobe: internal error: " + t);
            return 1;
        }
    }
}
