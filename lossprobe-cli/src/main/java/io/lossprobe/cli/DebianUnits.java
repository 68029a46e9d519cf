package io.lossprobe.cli;

import io.lossprobe.core.result.OutputFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The systemd units of the Debian package, written at build time ({@code mvn package}) from the archive's units in
 * {@code src/dist/systemd}: one set of units, so the two cannot drift. The archive's run
 * {@code /opt/lossprobe/bin/...}; the package's run {@code /usr/bin/...}, and their opening comment (how to copy
 * the unit in from the archive) becomes a line saying where they came from.
 *
 * <pre>java -cp ... io.lossprobe.cli.DebianUnits SRC-DIR OUT-DIR</pre>
 */
public final class DebianUnits {
    static final String ARCHIVE_BIN = "/opt/lossprobe/bin/";
    static final String PACKAGE_BIN = "/usr/bin/";

    private DebianUnits() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: DebianUnits SRC-DIR OUT-DIR");
        }
        Path out = Files.createDirectories(Path.of(args[1]));
        List<Path> units;
        try (Stream<Path> files = Files.list(Path.of(args[0]))) {
            units = files.filter(f -> f.getFileName().toString().matches(".*\\.(service|timer)")).sorted().toList();
        }
        for (Path unit : units) {
            String text = forPackage(Files.readString(unit, StandardCharsets.UTF_8));
            OutputFiles.write(out.resolve(unit.getFileName().toString()), text.getBytes(StandardCharsets.UTF_8));
        }
        System.out.println("Debian units: " + units.size() + " in " + out);
    }

    /** One unit as the package installs it. */
    static String forPackage(String archiveUnit) {
        int start = archiveUnit.indexOf("[Unit]");
        if (start < 0) {
            throw new IllegalArgumentException("not a unit with a [Unit] section");
        }
        return "# Installed by the lossprobe Debian package (docs/install.md); enable it with systemctl enable --now.\n"
            + archiveUnit.substring(start).replace(ARCHIVE_BIN, PACKAGE_BIN);
    }
}
