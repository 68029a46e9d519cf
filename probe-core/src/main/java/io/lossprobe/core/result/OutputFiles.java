package io.lossprobe.core.result;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Writes every file lossprobe produces (results, histogram logs, reports, Prometheus textfiles, JUnit XML) so
 * that a reader never sees half of one, a link planted at a predictable name is never followed, and a device is
 * never replaced.
 *
 * <p>What is at the path decides how:
 * <ul>
 *   <li>nothing, a regular file or a symbolic link: a new file is written beside it (a fresh random name, created
 *       exclusively, links not followed), flushed to disk, and renamed over the path. A link at the path is
 *       replaced, never written through, so {@code ln -s /etc/passwd /tmp/r.udp.step0.delay.hlog} gets nothing.</li>
 *   <li>a device, a FIFO or a socket ({@code /dev/null}, {@code /dev/stdout} into a pipe): written through, never
 *       renamed over (as root a rename would put a plain file where {@code /dev/null} was). Such a target is a
 *       stream: see {@link #isStream}.</li>
 *   <li>a directory: refused.</li>
 * </ul>
 * Every failure (a full disk, a device that says "no space" like {@code /dev/full}) is an {@link IOException};
 * the temporary file is removed.
 */
public final class OutputFiles {
    private static final String TMP_SUFFIX = ".tmp";

    private OutputFiles() {
    }

    /** Writes {@code bytes} to {@code file} as the class comment says. */
    public static void write(Path file, byte[] bytes) throws IOException {
        BasicFileAttributes existing = attributesOf(file);
        if (existing != null && existing.isDirectory()) {
            throw new IOException(file + " is a directory");
        }
        if (existing != null && !existing.isRegularFile() && !existing.isSymbolicLink()) {
            writeThrough(file, bytes);
            return;
        }
        writeByRename(file, bytes);
    }

    /**
     * Whether {@code file} is a device, FIFO or socket: something that is written through and cannot be rewritten
     * in place (a caller that rewrites a file as it goes writes a stream once, at the end). Links are not followed:
     * a link to {@code /dev/null} is a link, and is replaced.
     */
    public static boolean isStream(Path file) {
        try {
            BasicFileAttributes a = attributesOf(file);
            return a != null && a.isOther();
        } catch (IOException e) {
            return false;
        }
    }

    /** The path's own attributes (a link's, not its target's), or null when nothing is there. */
    private static BasicFileAttributes attributesOf(Path file) throws IOException {
        try {
            return Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * No O_CREAT, so a device that vanished is an error rather than a new file; O_NOFOLLOW, so a link swapped in
     * since the check is refused (ELOOP), not followed.
     */
    private static void writeThrough(Path file, byte[] bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            writeFully(ch, bytes);
        }
    }

    private static void writeByRename(Path file, byte[] bytes) throws IOException {
        Path tmp = createTemporary(file);
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                writeFully(ch, bytes);
                ch.force(false); // the data is on disk before the name points at it (a crash leaves old or new)
            }
            makeWorldReadable(tmp);
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
     * A new file beside the target, created exclusively (O_CREAT|O_EXCL never follows a link) under a random name.
     * The name starts with a dot and ends in {@code .tmp}, which node_exporter's textfile collector ignores.
     */
    private static Path createTemporary(Path file) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        String base = "." + file.getFileName() + ".";
        for (int attempt = 0; ; attempt++) {
            byte[] random = new byte[8];
            ThreadLocalRandom.current().nextBytes(random);
            Path tmp = dir.resolve(base + HexFormat.of().formatHex(random) + TMP_SUFFIX);
            try {
                FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
                return tmp;
            } catch (FileAlreadyExistsException e) {
                if (attempt >= 16) {
                    throw e;
                }
            }
        }
    }

    /** 0644 whatever the umask: readers (node_exporter, a web server) often run as another user. */
    private static void makeWorldReadable(Path tmp) throws IOException {
        PosixFileAttributeView view = Files.getFileAttributeView(tmp, PosixFileAttributeView.class,
            LinkOption.NOFOLLOW_LINKS);
        if (view != null) {
            view.setPermissions(PosixFilePermissions.fromString("rw-r--r--"));
        }
    }

    private static void writeFully(FileChannel ch, byte[] bytes) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
            ch.write(buffer);
        }
    }
}
