package io.lossprobe.cli;

import io.lossprobe.control.Auth;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code lossprobe keygen FILE}: a new 256-bit shared secret, readable only by its owner. */
@Command(name = "keygen",
    description = {"Writes a new shared secret for 'serve' and 'run --target': 256 random bits in hex, in a new file "
        + "with mode 0600. Copy it to the other host over a channel you trust (scp, a secrets manager)."},
    footer = {"", "Exit codes: 0 written, 1 runtime failure, 2 bad usage (the file exists).", "",
        "Example: lossprobe keygen /etc/lossprobe/secret"})
public final class KeygenCommand extends Subcommand {
    @Parameters(index = "0", paramLabel = "FILE", description = "The secret file to create (never overwritten).")
    Path file;

    @Override
    int run(CommandLine cl) throws Exception {
        Inputs.requireWritable(cl, file, "the secret to");
        Auth.writeNewSecret(file);
        cl.getOut().println("lossprobe: wrote a " + 8 * Auth.KEYGEN_BYTES + "-bit secret to " + file
            + " (mode 0600); use it with --secret-file on both hosts");
        return 0;
    }
}
