package io.lossprobe.cli;

import picocli.CommandLine.Option;

/** {@code --quiet}: less on the terminal, never less in the files. */
final class QuietOption {
    @Option(names = "--quiet",
        description = "Print less: no progress lines (check: only failures; mesh: only the summary).")
    boolean quiet;
}
