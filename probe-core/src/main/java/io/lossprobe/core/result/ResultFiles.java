package io.lossprobe.core.result;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/** Reads and writes result files. Writes go through {@link OutputFiles}: a reader never sees half of one. */
public final class ResultFiles {
    private static final ObjectMapper MAPPER = new ObjectMapper()
        .enable(SerializationFeature.INDENT_OUTPUT)
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    /** A running file's status as the mapper writes it, and the same length saying failed (JSON allows the space). */
    private static final byte[] RUNNING = statusAsWritten(RunStatus.RUNNING, "");
    private static final byte[] FAILED = statusAsWritten(RunStatus.FAILED,
        " ".repeat(RunStatus.RUNNING.json().length() - RunStatus.FAILED.json().length()));

    private ResultFiles() {
    }

    private static byte[] statusAsWritten(RunStatus status, String padding) {
        return ("\"status\" : \"" + status.json() + "\"" + padding).getBytes(StandardCharsets.US_ASCII);
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    public static void write(Path file, RunResult result) throws IOException {
        writeAtomically(file, MAPPER.writeValueAsBytes(result));
    }

    /** Writes {@code bytes} to {@code file} with {@link OutputFiles#write}: atomic, links not followed, devices
     * kept. */
    public static void writeAtomically(Path file, byte[] bytes) throws IOException {
        OutputFiles.write(file, bytes);
    }

    /**
     * Marks a results file {@code failed} when a full disk leaves no room to rewrite it: overwrites its status
     * {@code "running"} in place with {@code "failed" } (the same length, so no block is allocated on ext4, xfs or
     * tmpfs), provided the file still holds exactly {@code lastWritten}, the bytes written there last.
     *
     * @return whether the file now says {@code failed}
     */
    public static boolean markFailedInPlace(Path file, byte[] lastWritten) throws IOException {
        int at = indexOf(lastWritten, RUNNING);
        if (at < 0 || !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS)) {
            if (ch.size() != lastWritten.length) {
                return false;
            }
            ByteBuffer onDisk = ByteBuffer.allocate(RUNNING.length);
            int read = 0;
            while (onDisk.hasRemaining() && read >= 0) {
                read = ch.read(onDisk, at + onDisk.position());
            }
            if (!Arrays.equals(onDisk.array(), RUNNING)) {
                return false;
            }
            ByteBuffer failed = ByteBuffer.wrap(FAILED);
            while (failed.hasRemaining()) {
                ch.write(failed, at + failed.position());
            }
            ch.force(false);
            return true;
        }
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
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
