package io.lossprobe.core.result;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Reads and writes result files. Writes are atomic (a temporary file, then a rename), so a reader never sees half. */
public final class ResultFiles {
    private static final ObjectMapper MAPPER = new ObjectMapper()
        .enable(SerializationFeature.INDENT_OUTPUT)
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private ResultFiles() {
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    public static void write(Path file, RunResult result) throws IOException {
        writeAtomically(file, MAPPER.writeValueAsBytes(result));
    }

    /**
     * Writes by a temporary file in the same directory and a rename, so a reader (node_exporter's textfile
     * collector, a web server, a nightly job) never sees half of it. The temporary name starts with a dot and ends
     * in {@code .tmp}, which the textfile collector ignores. The file is made world-readable (0644): readers often
     * run as another user.
     */
    public static void writeAtomically(Path file, byte[] bytes) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
        try {
            Files.write(tmp, bytes);
            try {
                Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
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

    /**
     * Reads a result file, refusing files of a newer schema than this lossprobe knows.
     *
     * @throws IOException with a one-line message for unreadable, malformed or too-new files
     */
    public static RunResult read(Path file) throws IOException {
        JsonNode tree;
        try {
            tree = MAPPER.readTree(file.toFile());
        } catch (JsonProcessingException e) {
            throw new IOException(file + " is " + JsonProblems.describe(e));
        }
        if (tree == null || !tree.has("schemaVersion")) {
            throw new IOException(file + " is not a lossprobe result (no schemaVersion)");
        }
        int version = tree.get("schemaVersion").asInt();
        if (version > RunResult.SCHEMA_VERSION) {
            throw new IOException(file + " has schema version " + version + ", newer than this lossprobe reads ("
                + RunResult.SCHEMA_VERSION + "); upgrade lossprobe");
        }
        try {
            return MAPPER.treeToValue(tree, RunResult.class);
        } catch (JsonProcessingException e) {
            throw new IOException(file + " is not a readable lossprobe result: " + JsonProblems.describe(e));
        } catch (IllegalArgumentException e) {
            throw new IOException(file + " is not a readable lossprobe result: " + e.getMessage());
        }
    }
}
