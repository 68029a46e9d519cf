package io.lossprobe.cli;

import io.lossprobe.control.Auth;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The ENVIRONMENT and FILES sections of a man page ({@link ManPage}), from the options the command has: a command
 * with {@code --secret-file} reads $LOSSPROBE_SECRET and /etc/lossprobe/secret, one with {@code --policy} the
 * example policy, one with {@code --prometheus} writes to Debian's node_exporter directory; the paths are the
 * Debian package's (docs/install.md).
 */
final class ManPageFiles {
    /** The units that run a command, by page name. */
    private static final Map<String, String> UNITS = Map.of(
        "lossprobe-serve", "lossprobe-serve.service",
        "lossprobe-mesh", "lossprobe-mesh.service and lossprobe-mesh.timer",
        "lossprobe-run", "lossprobe-nightly.service and lossprobe-nightly.timer (with lossprobe-nightly)");

    private ManPageFiles() {
    }

    static void environment(StringBuilder sb, CommandSpec spec) {
        sb.append(".SH ENVIRONMENT\n");
        item(sb, "JAVA_HOME", "The Java runtime (17 or newer) the launcher runs; without it, java on PATH.");
        item(sb, "LOSSPROBE_JAVA_OPTS", "More JVM options for the launcher, for example -Xmx2g.");
        if (spec.findOption("--secret-file") != null) {
            item(sb, Auth.SECRET_ENV, "The shared secret, when --secret-file is not given.");
        }
    }

    static void files(StringBuilder sb, CommandSpec spec) {
        sb.append(".SH FILES\n");
        item(sb, "/usr/bin/lossprobe", "The launcher; it runs /usr/share/lossprobe/lossprobe.jar (bin/lossprobe and "
            + "lib/lossprobe.jar in the distribution archive).");
        if (spec.findOption("--secret-file") != null) {
            item(sb, "/etc/lossprobe/secret", "Where the units look for the shared secret (lossprobe keygen writes "
                + "one; mode 0640, group lossprobe).");
        }
        if (spec.findOption("--policy") != null) {
            item(sb, "/etc/lossprobe/policy.json", "The example policy the nightly unit checks against.");
        }
        if (spec.findOption("--prometheus") != null) {
            item(sb, "/var/lib/prometheus/node-exporter", "Debian's node_exporter textfile directory; the package "
                + "lets user lossprobe write there (an ACL).");
        }
        String unit = UNITS.get(spec.qualifiedName("-"));
        if (unit != null) {
            item(sb, "/lib/systemd/system/", "The systemd units: " + unit + ", installed but not enabled.");
        }
    }

    private static void item(StringBuilder sb, String tag, String text) {
        sb.append(".TP\n\\fI").append(ManPage.escape(tag)).append("\\fR\n").append(ManPage.escapeLine(text))
            .append('\n');
    }
}
