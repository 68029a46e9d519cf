package io.lossprobe.udp;

import java.io.IOException;
import java.io.InputStream;
import io.lossprobe.core.wire.MessageHeader;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * lossprobe's own native piece (src/main/c/lossprobe_udp.c and lossprobe_udp_send.c, compiled by this module's build
 * where gcc is present): kernel receive timestamps, which Netty's epoll transport reads but never hands to Java, the
 * per-thread settings Java has no API for (timer slack, CPU affinity), and the batched send path
 * ({@link NativeBatchSender}). Loaded once from the jar; where it is missing or does
 * not load (another architecture, no gcc at build time, a noexec temporary directory) {@link #available()} is
 * false, {@link #unavailableBecause()} says why, and the transport falls back to what Java and Netty offer.
 *
 * <p>Every call returns a value at least 0, or minus an errno.
 */
final class NativeUdp {
    // The meta buffer {@link #readStampedNs} fills, as lossprobe_udp.c declares it (NativeLayoutTest holds the two
    // together): MAX_BATCH records of META_BYTES, one a datagram, then the read's two clock samples.
    /** Bytes of one datagram's record. */
    static final int META_BYTES = 48;
    static final int META_TOKEN = 0;
    static final int META_LENGTH = 4;
    /** The kernel's receive stamp, on CLOCK_REALTIME as the kernel takes it ({@link RealtimeToMonotonic}). */
    static final int META_REALTIME_NS = 8;
    static final int META_FAMILY = 16;
    static final int META_PORT = 18;
    static final int META_ADDR = 24;
    /** With UDP_GRO: the size of the coalesced datagrams a slot holds (the last may be shorter); 0 for one. */
    static final int META_SEGMENT = 40;
    /**
     * {@link #META_SEGMENT} of a datagram the kernel cut to its slot (MSG_TRUNC): longer than the slot, so never a
     * message of the plan's size; delivered as corrupt (or foreign), never read past its slot.
     */
    static final int SEGMENT_TRUNCATED = -1;
    /** The TOS / traffic-class byte the datagram arrived with (IP_RECVTOS, IPV6_RECVTCLASS), or {@link #NO_TOS}. */
    static final int META_TOS = 44;
    /** {@link #META_TOS} when the kernel gave no class (the socket was not asked for it). */
    static final int NO_TOS = -1;
    /** Most datagrams one {@link #readStampedNs} returns. */
    static final int MAX_BATCH = 128;
    /** Bytes of one sample of CLOCK_REALTIME - CLOCK_MONOTONIC. */
    static final int SAMPLE_BYTES = 24;
    /** Within a sample: CLOCK_REALTIME minus CLOCK_MONOTONIC, ns. */
    static final int SAMPLE_OFFSET_NS = 0;
    /** Within a sample: how far apart its two realtime reads were (the offset is within half of it); -1: none. */
    static final int SAMPLE_WINDOW_NS = 8;
    /** Within a sample: CLOCK_MONOTONIC ({@link System#nanoTime()}) when it was taken. */
    static final int SAMPLE_AT_NS = 16;
    /** The sample every read takes before it waits. */
    static final int META_SAMPLE_BEFORE = MAX_BATCH * META_BYTES;
    /** The sample a read takes after its last recvmmsg, when it read anything (else no sample). */
    static final int META_SAMPLE_AFTER = META_SAMPLE_BEFORE + SAMPLE_BYTES;
    /** The meta buffer's size: the records and the two samples. */
    static final int META_BUFFER_BYTES = META_SAMPLE_AFTER + SAMPLE_BYTES;
    /** {@link #META_REALTIME_NS} when the kernel gave no stamp for a datagram. */
    static final long NO_STAMP = Long.MIN_VALUE;
    /** {@link #META_LENGTH} of a record saying a socket's error queue was emptied ({@link #META_REALTIME_NS}: how
     * many). */
    static final int ERRQUEUE_DRAINED = -100_000;
    /** The token {@link #epollAdd} takes for an eventfd: a wake-up, drained and never delivered. */
    static final int WAKE_TOKEN = -1;
    static final short AF_INET = 2;

    private static final String LIBRARY = "lossprobe_udp";
    /** {@code -Dlossprobe.native=off} runs without the native piece, as a build without gcc would. */
    static final String OFF_PROPERTY = "lossprobe.native";
    /** Where the piece sits in the jar for this machine's architecture. */
    static final String RESOURCE = "/META-INF/native/lib" + LIBRARY + "_"
        + System.getProperty("os.arch", "").toLowerCase(Locale.ROOT) + ".so";
    private static final String WHY_NOT;

    static {
        String why;
        try {
            load();
            why = null;
        } catch (Throwable t) { // UnsatisfiedLinkError, an I/O error extracting it: the fallback says why
            why = t.getMessage() == null ? t.toString() : t.getMessage();
        }
        WHY_NOT = why;
    }

    private NativeUdp() {
    }

    /** True when the native piece loaded. */
    static boolean available() {
        return WHY_NOT == null;
    }

    /** Why the native piece is not there, in words; null when it is. */
    static String unavailableBecause() {
        return WHY_NOT;
    }

    /**
     * The library for this machine, from the jar (META-INF/native/liblossprobe_udp_ARCH.so) into a private
     * temporary file, loaded, then deleted (the mapping stays).
     */
    private static void load() throws IOException {
        if ("off".equalsIgnoreCase(System.getProperty(OFF_PROPERTY))) {
            throw new UnsatisfiedLinkError("turned off (-D" + OFF_PROPERTY + "=off)");
        }
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
            throw new UnsatisfiedLinkError("kernel timestamps are implemented for Linux only");
        }
        try (InputStream in = NativeUdp.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("lossprobe was built without its native piece (" + RESOURCE
                    + " is not in the jar: gcc was missing at build time?)");
            }
            Path file = Files.createTempFile("lossprobe-" + LIBRARY + "-", ".so"); // 0600, exclusive
            try {
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                System.load(file.toAbsolutePath().toString());
            } finally {
                Files.deleteIfExists(file);
            }
        }
    }

    static native int setTimerSlack0(long ns);

    static native long timerSlack0();

    static native int pinToCpu0(int cpu);

    static native int currentCpu0();

    static native int setSlice0(long ns);

    static native long slice0();

    static native int enableTimestamps0(int fd);

    static native int enableTos0(int fd, int ipv6);

    static native int epollCreate0();

    static native int epollAdd0(int epfd, int fd, int token);

    static native int eventFd0();

    static native int eventFdWrite0(int fd);

    static native int close0(int fd);

    static native int readStamped0(int epfd, long timeoutNs, ByteBuffer slots, int slotBytes, int maxDatagrams,
                                   ByteBuffer meta);

    static native int replyTo0(int fd, ByteBuffer buffer, int offset, int length, ByteBuffer meta, int metaOffset);

    /** The constants above as the library was compiled with them, "NAME=value,..."; for NativeLayoutTest. */
    static native String layout0();

    static native int udpSocket0(int family, int sndbuf, int recverr);

    static native int intOption0(int fd, int level, int name);

    static native int bind0(int fd, int family, byte[] address);

    static native int receiveFrom0(int fd, ByteBuffer buffer, int capacity, ByteBuffer from, int timeoutMs);

    static native int sendBatch0(int fd, ByteBuffer data, ByteBuffer table, int entries, ByteBuffer dest);

    /** An errno in words, as Netty's exceptions would say it, for the few a datagram socket reports. */
    static String describeErrno(int errno) {
        String text = switch (errno) {
            case 111 -> "Connection refused";
            case 113 -> "No route to host";
            case 101 -> "Network is unreachable";
            case 90 -> "Message too long";
            case 105 -> "No buffer space available";
            case 11 -> "Resource temporarily unavailable";
            default -> null;
        };
        return text == null ? "errno " + errno : text;
    }

    /**
     * Sets the calling thread's timer slack (Linux's default is 50 us: a timed wait may end that much late so the
     * kernel can merge wake-ups); true when it took.
     */
    static boolean setTimerSlack(long ns) {
        return available() && setTimerSlack0(ns) == 0;
    }

    /** The calling thread's timer slack in ns, or -1 when unknown. */
    static long timerSlack() {
        if (!available()) {
            return -1;
        }
        long slack = timerSlack0();
        return slack < 0 ? -1 : slack;
    }

    /** Pins the calling thread to {@code cpu}; 0, or minus the errno (EINVAL: not a CPU this process may use). */
    static int pinToCpu(int cpu) {
        return available() ? pinToCpu0(cpu) : -38; // ENOSYS
    }

    /** Asks for a scheduler slice of {@code ns} for the calling thread; 0, or minus the errno. */
    static int setSlice(long ns) {
        return available() ? setSlice0(ns) : -38; // ENOSYS
    }

    /** The calling thread's scheduler slice in ns (0 on kernels without custom slices), or -1 when unknown. */
    static long slice() {
        long slice = available() ? slice0() : -1;
        return Math.max(-1, slice);
    }

    /** The CPU the calling thread runs on now, or -1 when unknown. */
    static int currentCpu() {
        int cpu = available() ? currentCpu0() : -1;
        return Math.max(-1, cpu);
    }

    /** Turns on SO_TIMESTAMPNS for a socket; 0 or minus the errno. */
    static int enableTimestamps(int fd) {
        return enableTimestamps0(fd);
    }

    /** Asks a socket for each arrival's TOS / traffic class (IPV6_RECVTCLASS too when ipv6); 0 or -errno. */
    static int enableTos(int fd, boolean ipv6) {
        return enableTos0(fd, ipv6 ? 1 : 0);
    }

    static int epollCreate() {
        return epollCreate0();
    }

    /** Adds {@code fd} to the set, level-triggered; its datagrams carry {@code token} ({@link #WAKE_TOKEN}:
     * wake-up). */
    static int epollAdd(int epfd, int fd, int token) {
        return epollAdd0(epfd, fd, token);
    }

    static int eventFd() {
        return eventFd0();
    }

    static int eventFdWrite(int fd) {
        return eventFdWrite0(fd);
    }

    static int close(int fd) {
        return close0(fd);
    }

    /**
     * Waits up to {@code timeoutNs} (0: does not wait; to the nanosecond where the kernel has epoll_pwait2, else
     * rounded up to a millisecond) for the sockets of {@code epfd}, then reads what is there: at
     * most {@code maxDatagrams} datagrams, datagram i in bytes {@code [i * slotBytes, (i + 1) * slotBytes)} of
     * {@code slots} and its record at {@code i * META_BYTES} of {@code meta} (native byte order): token, length (or
     * minus the errno a socket's read failed with, or {@link #ERRQUEUE_DRAINED}), the kernel's receive stamp on
     * CLOCK_REALTIME ({@link #NO_STAMP} without one), source family, port and address. Every call also leaves its
     * samples of the clocks' offset at {@link #META_SAMPLE_BEFORE} and {@link #META_SAMPLE_AFTER}, from which a
     * {@link RealtimeToMonotonic} converts the stamps. Both buffers must be direct; {@code meta} holds
     * {@link #META_BUFFER_BYTES} (else -EINVAL).
     *
     * @return datagrams read, or minus the errno of a failed wait
     */
    static int readStampedNs(int epfd, long timeoutNs, ByteBuffer slots, int slotBytes, int maxDatagrams,
                             ByteBuffer meta) {
        // The native read writes where these say: checked here, before it runs, not trusted to the caller.
        if (!slots.isDirect() || !meta.isDirect()) {
            throw new IllegalArgumentException("the native read needs direct buffers");
        }
        if (timeoutNs < 0) {
            throw new IllegalArgumentException("a wait of " + timeoutNs + " ns");
        }
        if (slotBytes < MessageHeader.LENGTH || maxDatagrams < 1 || maxDatagrams > MAX_BATCH) {
            throw new IllegalArgumentException("slots of " + slotBytes + " bytes, " + maxDatagrams
                + " at a time (at least a header, 1.." + MAX_BATCH + ")");
        }
        if ((long) slotBytes * maxDatagrams > slots.capacity() || meta.capacity() < META_BUFFER_BYTES) {
            throw new IllegalArgumentException(maxDatagrams + " slots of " + slotBytes + " bytes in "
                + slots.capacity() + " bytes, records in " + meta.capacity() + " (need " + META_BUFFER_BYTES + ")");
        }
        int n = readStamped0(epfd, timeoutNs, slots, slotBytes, maxDatagrams, meta);
        if (n > maxDatagrams) {
            throw new IllegalStateException("the native read returned " + n + " datagrams for " + maxDatagrams
                + " slots");
        }
        return n;
    }

    /** Sends {@code length} bytes at {@code offset} of {@code buffer} to the source of the record at
     * {@code metaOffset}. */
    static int replyTo(int fd, ByteBuffer buffer, int offset, int length, ByteBuffer meta, int metaOffset) {
        return replyTo0(fd, buffer, offset, length, meta, metaOffset);
    }
}
