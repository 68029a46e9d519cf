package io.lossprobe.core.result;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Writes every file lossprobe produces (results, histogram logs, reports, Prometheus textfiles, JUnit XML) so
 * that a reader never sees half of one, a link planted at a predictable name is never followed, and a device is
 * never replaced.
 *
 * <p>What is at the path decides how:
 * <ul>
 *   <li>nothing, a regular file, or a symbolic link to a regular file or to nothing: a new file is written beside
 *       it (a fresh random name, created exclusively, links not followed), flushed to disk, and renamed over the
 *       path. A link at the path is replaced, never written through, so {@code ln -s /etc/passwd
 *       /tmp/r.udp.step0.delay.hlog} gets nothing.</li>
 *   <li>a device, a FIFO or a socket ({@code /dev/null}): written through (appending), never renamed over (as root
 *       a rename would put a plain file where {@code /dev/null} was). Such a target is a stream: see
 *       {@link #isStream}.</li>
 *   <li>the process's own output by name ({@code /dev/stdout}, {@code /dev/stderr}, {@code /dev/fd/1},
 *       {@code /proc/self/fd/2}, ...): links, followed on purpose, written through like a device.</li>
 *   <li>a symbolic link to anything else (a device, a FIFO, a directory): refused. Followed, a link planted at a
 *       predictable name and pointing at {@code /dev/sda} would have had JSON written over a disk.</li>
 *   <li>a directory: refused.</li>
 * </ul>
 * Every failure (a full disk, a device that says "no space" like {@code /dev/full}) is an {@link IOException};
 * the temporary file is removed.
 */
public final class OutputFiles {
    private static final String TMP_SUFFIX = ".tmp";

    /** What is at the path is not written to on principle (a directory, a link to a device): bad usage. */
    public static final class Refused extends IOException {
        Refused(String message) {
            super(message);
        }
    }

    private OutputFiles() {
    }

    /** Writes {@code bytes} to {@code file} as the class comment says. */
    public static void write(Path file, byte[] bytes) throws IOException {
        if (isOwnOutput(file)) {
            writeThrough(file, bytes);
            return;
        }
        BasicFileAttributes existing = attributesOf(file);
        if (existing != null && existing.isDirectory()) {
            throw new Refused(file + " is a directory");
        }
        if (existing != null && existing.isOther()) {
            writeThrough(file, bytes, LinkOption.NOFOLLOW_LINKS);
            return;
        }
        if (existing != null && existing.isSymbolicLink()) {
            BasicFileAttributes target = targetOf(file);
            if (target != null && !target.isRegularFile()) {
                throw new Refused(file + " is a link to something that is not a regular file: name a device "
                    + "itself, not a link to it");
            }
        }
        writeByRename(file, bytes);
    }

    /**
     * Opens {@code file} for a stream written as it goes (JSON lines): a device, FIFO or this process's own output is
     * written through (appending); a regular file is emptied and written in place; nothing there, a new file (0644).
     * Links are never followed (a link, even to a regular file, is refused: name the file itself), nor is a
     * directory written to.
     */
    public static java.io.OutputStream openStream(Path file) throws IOException {
        if (isOwnOutput(file)) {
            return java.nio.channels.Channels.newOutputStream(FileChannel.open(file, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND));
        }
        BasicFileAttributes existing = attributesOf(file);
        if (existing != null && existing.isDirectory()) {
            throw new Refused(file + " is a directory");
        }
        if (existing != null && existing.isSymbolicLink()) {
            throw new Refused(file + " is a link: name the file itself");
        }
        if (existing != null && existing.isOther()) {
            return java.nio.channels.Channels.newOutputStream(FileChannel.open(file, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND, LinkOption.NOFOLLOW_LINKS));
        }
        FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS);
        if (existing == null) {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        }
        return java.nio.channels.Channels.newOutputStream(ch);
    }

    /**
     * Whether {@code file} is a device, FIFO or socket, or this process's own output by name: something that is
     * written through and cannot be rewritten in place (a caller that rewrites a file as it goes writes a stream
     * once, at the end). Other links are not followed: a link is not a stream.
     */
    public static boolean isStream(Path file) {
        if (isOwnOutput(file)) {
            return true;
        }
        try {
            BasicFileAttributes a = attributesOf(file);
            return a != null && a.isOther();
        } catch (IOException e) {
            return false;
        }
    }

    /** The names of this process's standard output and error, which are links on Linux (to /proc/self/fd/N). */
    private static final Set<Path> OWN_OUTPUT = Set.of(Path.of("/dev/stdout"),
        Path.of("/dev/stderr"), Path.of("/dev/fd/1"), Path.of("/dev/fd/2"), Path.of("/proc/self/fd/1"),
        Path.of("/proc/self/fd/2"));

    private static boolean isOwnOutput(Path file) {
        return OWN_OUTPUT.contains(file.toAbsolutePath().normalize());
    }

    /** What a link points at (followed), or null when it points at nothing. */
    private static BasicFileAttributes targetOf(Path link) throws IOException {
        try {
            return Files.readAttributes(link, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            return null;
        } catch (FileSystemException e) {
            return null; // a loop or a too-long chain: nothing to write through; the link itself is replaced
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
     * No O_CREAT, so a device that vanished is an error rather than a new file; with O_NOFOLLOW, a link swapped in
     * since the check is refused (ELOOP), not followed. O_APPEND: standard output redirected to a file keeps what
     * is already there.
     */
    private static void writeThrough(Path file, byte[] bytes, OpenOption... extra) throws IOException {
        Set<OpenOption> options = new HashSet<>(List.of(
            StandardOpenOption.WRITE, StandardOpenOption.APPEND));
        options.addAll(List.of(extra));
        try (FileChannel ch = FileChannel.open(file, options)) {
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
            setPermissions(tmp, permissionsFor(file));
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
                // Owner-only until it is whole and given its permissions: the data is never readable wider.
                FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))).close();
                return tmp;
            } catch (FileAlreadyExistsException e) {
                if (attempt >= 16) {
                    throw e;
                }
            }
        }
    }

    private static final Set<PosixFilePermission> DEFAULT_PERMISSIONS = PosixFilePermissions.fromString("rw-r--r--");

    /**
     * A new file is 0644 whatever the umask: readers (node_exporter, a web server) often run as another user. A file
     * that replaces a regular file keeps that file's permissions where they are stricter (0644 and the old ones
     * together): a results file someone made 0600 is not widened to 0644 by the next write.
     */
    private static Set<PosixFilePermission> permissionsFor(Path file) throws IOException {
        PosixFileAttributes old;
        try {
            old = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException | UnsupportedOperationException e) {
            return DEFAULT_PERMISSIONS;
        }
        if (!old.isRegularFile()) {
            return DEFAULT_PERMISSIONS; // a link is replaced, not its target's permissions inherited
        }
        Set<PosixFilePermission> kept = EnumSet.noneOf(PosixFilePermission.class);
        kept.addAll(old.permissions());
        kept.retainAll(DEFAULT_PERMISSIONS);
        return kept;
    }

    private static void setPermissions(Path tmp, Set<PosixFilePermission> permissions) throws IOException {
        PosixFileAttributeView view = Files.getFileAttributeView(tmp, PosixFileAttributeView.class,
            LinkOption.NOFOLLOW_LINKS);
        if (view != null) {
            view.setPermissions(permissions);
        }
    }

    private static void writeFully(FileChannel ch, byte[] bytes) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
            ch.write(buffer);
        }
    }
}
