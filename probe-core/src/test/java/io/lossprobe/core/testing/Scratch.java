package io.lossprobe.core.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Real file-system hazards for tests, made as root: device nodes made with {@code mknod} in a test's own
 * directory (never the machine's), and small tmpfs mounts that fill up. Tests that need them are skipped
 * elsewhere.
 */
public final class Scratch {
    private Scratch() {
    }

    /** Skips the test unless it runs as root (mknod and mount need it). */
    public static void assumeRoot() {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root (mknod, mount)");
    }

    /** A character device node at {@code path} with the given numbers: 1,3 is a null device, 1,7 a full one. */
    public static Path characterDevice(Path path, int major, int minor) throws IOException, InterruptedException {
        assumeRoot();
        run("mknod", path.toString(), "c", Integer.toString(major), Integer.toString(minor));
        return path;
    }

    /** The device number ({@code st_rdev}) of the node at {@code path}, links not followed. */
    public static long deviceNumber(Path path) throws IOException {
        return ((Number) Files.getAttribute(path, "unix:rdev", LinkOption.NOFOLLOW_LINKS)).longValue();
    }

    /** Whether {@code path} is (itself, not through a link) a character device. */
    public static boolean isCharacterDevice(Path path) throws IOException {
        int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        return (mode & 0170000) == 0020000;
    }

    /** Mounts a tmpfs of {@code sizeBytes} at a new directory under {@code parent}; closing unmounts it. */
    public static Tmpfs tmpfs(Path parent, long sizeBytes) throws IOException, InterruptedException {
        assumeRoot();
        Path dir = Files.createDirectory(parent.resolve("tmpfs"));
        run("mount", "-t", "tmpfs", "-o", "size=" + sizeBytes + ",mode=0755", "lossprobe-test", dir.toString());
        return new Tmpfs(dir);
    }

    /** A mounted tmpfs. */
    public record Tmpfs(Path dir) implements AutoCloseable {
        /** Writes a filler file until the file system says it is full; returns the bytes it took. */
        public long fill() throws IOException {
            byte[] block = new byte[4096];
            long written = 0;
            try (OutputStream out = Files.newOutputStream(dir.resolve("filler"))) {
                while (true) {
                    out.write(block);
                    out.flush();
                    written += block.length;
                }
            } catch (IOException e) {
                if (!String.valueOf(e.getMessage()).contains("No space left")) {
                    throw e;
                }
                return written;
            }
        }

        /** Frees what {@link #fill} took. */
        public void drain() throws IOException {
            Files.deleteIfExists(dir.resolve("filler"));
        }

        @Override
        public void close() throws IOException, InterruptedException {
            run("umount", dir.toString());
        }
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not finish");
        }
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: "
                + new String(p.getInputStream().readAllBytes()).strip());
        }
    }
}
