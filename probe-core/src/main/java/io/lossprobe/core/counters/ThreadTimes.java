package io.lossprobe.core.counters;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One thread's scheduler times, from {@code /proc/self/task/TID/schedstat} (Linux's CONFIG_SCHED_INFO): the time
 * it ran on a CPU and the time it waited on a run queue for one, in ns since it started. Read on the engine's
 * thread, never on the thread measured; the thread's id is found once, on that thread, before its work starts
 * ({@link #ofCurrentThread}).
 */
@FunctionalInterface
public interface ThreadTimes {
    /** No thread to read: every sample is unknown. */
    ThreadTimes NONE = () -> null;

    /** The thread's times now, or null when they cannot be read. */
    Sample sample();

    /**
     * @param cpuNs       time on a CPU (user and system) since the thread started
     * @param runQueueNs  time runnable but waiting on a run queue since the thread started
     */
    record Sample(long cpuNs, long runQueueNs) {
    }

    /**
     * The calling thread's times, read later from any thread: its id comes from {@code /proc/thread-self} now.
     * {@link #NONE} where that cannot be read (another OS, a kernel without the file).
     */
    static ThreadTimes ofCurrentThread() {
        try {
            // "PID/task/TID", relative to /proc.
            Path self = Files.readSymbolicLink(Path.of("/proc/thread-self"));
            Path file = Path.of("/proc").resolve(self).resolve("schedstat");
            return Files.isReadable(file) ? () -> read(file) : NONE;
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return NONE;
        }
    }

    private static Sample read(Path file) {
        try {
            return parse(new String(Files.readAllBytes(file), StandardCharsets.US_ASCII));
        } catch (IOException e) {
            return null; // the thread ended
        }
    }

    /** Parses a schedstat line: {@code cpuNs runQueueNs timeslices}; null when it is not one. */
    static Sample parse(String text) {
        String[] f = text.trim().split("\\s+");
        if (f.length < 2) {
            return null;
        }
        try {
            return new Sample(Long.parseLong(f[0]), Long.parseLong(f[1]));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
