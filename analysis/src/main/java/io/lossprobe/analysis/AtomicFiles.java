package io.lossprobe.analysis;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Writes a file by a temporary file in the same directory and a rename, so a reader (node_exporter's textfile
 * collector, a web server) never sees half of it. The temporary name starts with a dot and ends in {@code .tmp},
 * which the textfile collector ignores. The file is made world-readable (0644): the collector usually runs as
 * another user.
 */
public final class AtomicFiles {
    private AtomicFiles() {
    }

    public static void write(Path file, byte[] bytes) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
        try {
            Files.write(tmp, bytes);
            try {
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
            } catch (UnsupportedOperationException e) {
                // Not a POSIX file system: keep the default permissions.
            }
            try {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
