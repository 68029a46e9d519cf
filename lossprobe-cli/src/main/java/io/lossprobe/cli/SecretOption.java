package io.lossprobe.cli;

import io.lossprobe.control.Auth;
import java.io.PrintWriter;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --secret-file}: the shared secret of {@code serve} and the controllers that use it. */
final class SecretOption {
    @Option(names = "--secret-file", paramLabel = "FILE",
        description = "The secret shared by 'serve' and its controllers ('run --target', 'mesh'), as 'lossprobe "
            + "keygen' writes it; else $" + Auth.SECRET_ENV + ". Required between hosts.")
    Path secretFile;

    /** The shared secret ({@link Auth#load}), its warnings (readable by others, short) printed on {@code err}. */
    Auth load(PrintWriter err, String prefix) {
        return Auth.load(secretFile, warning -> {
            err.println(prefix + "warning: " + warning);
            err.flush();
        });
    }
}
