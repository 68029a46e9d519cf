package io.lossprobe.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --baseline} of {@code check} and of {@code run}'s check. */
final class BaselineOption {
    @Option(names = "--baseline", paramLabel = "FILE",
        description = "Baseline result the policy check compares with (overrides the policy's baseline.file; run: "
            + "with --policy).")
    Path baseline;
}
