package io.lossprobe.aeron;

import io.aeron.CncFileDescriptor;
import io.aeron.CommonContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Removes the embedded drivers' directories ({@code lossprobe-aeron-<pid>-<n>-<random>}, without the random part
 * before, tens of MiB of /dev/shm each) that lossprobe processes killed or crashed left behind. A directory goes
 * only when its process is gone, its driver's heartbeat is stale or absent (a live driver in another PID namespace
 * sharing /dev/shm keeps its own), it is a real directory (a link with that name is not followed) and it belongs
 * to this user.
 */
final class DriverLeftovers {
    private static final Pattern NAME =
        Pattern.compile(Pattern.quote(AeronDriver.DIR_PREFIX) + "(\\d+)-\\d+(-[0-9a-f]+)?");
    /** Aeron's own default: a driver whose heartbeat is older than this is dead. */
    private static final long DRIVER_TIMEOUT_MS = TimeUnit.SECONDS.toMillis(10);

    private DriverLeftovers() {
    }

    /** Removes the leftovers in {@code base}; returns those removed. Best effort: what cannot go stays. */
    static List<Path> clean(Path base) {
        List<Path> removed = new ArrayList<>();
        Object me = ownerOf(Path.of("/proc/self/."));
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(base, AeronDriver.DIR_PREFIX + "*")) {
            for (Path dir : entries) {
                if (isLeftover(dir, me) && delete(dir)) {
                    removed.add(dir);
                }
            }
        } catch (IOException | RuntimeException e) {
            // An unreadable base: nothing to clean here, and the driver's own start will say what is wrong.
        }
        return removed;
    }

    private static boolean isLeftover(Path dir, Object me) {
        Matcher m = NAME.matcher(dir.getFileName().toString());
        if (!m.matches() || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        long pid;
        try {
            pid = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            return false;
        }
        if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            return false;
        }
        if (me == null || !me.equals(ownerOf(dir))) {
            return false;
        }
        return !driverActive(dir);
    }

    /**
     * Whether a driver's heartbeat in {@code dir} is fresh. A CnC file whose version is still 0 was never finished
     * (its process died starting): Aeron's own check would wait its whole timeout for it, so it is read here first.
     */
    private static boolean driverActive(Path dir) {
        Path cnc = dir.resolve(CncFileDescriptor.CNC_FILE);
        if (!Files.isRegularFile(cnc, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (FileChannel ch = FileChannel.open(cnc, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            ByteBuffer version = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            long at = CncFileDescriptor.cncVersionOffset(0);
            int read = 0;
            while (version.hasRemaining() && read >= 0) {
                read = ch.read(version, at + version.position());
            }
            if (version.hasRemaining() || version.getInt(0) == 0) {
                return false;
            }
            return CommonContext.isDriverActive(dir.toFile(), DRIVER_TIMEOUT_MS, message -> { });
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static Object ownerOf(Path path) {
        try {
            return Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Deletes depth first without following links (a link inside is removed, not its target). */
    private static boolean delete(Path dir) {
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                    if (e != null) {
                        throw e;
                    }
                    Files.delete(d);
                    return FileVisitResult.CONTINUE;
                }
            });
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
