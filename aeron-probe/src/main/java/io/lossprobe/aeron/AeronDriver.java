package io.lossprobe.aeron;

import io.aeron.Aeron;
import io.aeron.AeronCounters;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.driver.reports.LossReportReader;
import io.aeron.driver.reports.LossReportUtil;
import io.aeron.driver.status.SystemCounterDescriptor;
import java.io.File;
import java.nio.MappedByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.agrona.CloseHelper;
import org.agrona.IoUtil;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

/**
 * One media driver and one Aeron client, shared by a transport's receiver and sender in the same process.
 *
 * <p>By default the driver is embedded, in a directory of its own under /dev/shm that the driver deletes on start
 * and on shutdown (and that {@link #close} deletes again in case the driver could not). With {@code aeron.dir} the
 * client attaches to a driver someone else runs, and only the client is closed here.
 */
final class AeronDriver implements AutoCloseable {
    static final String DIR_PREFIX = "lossprobe-aeron-";
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    private final MediaDriver driver;
    private final Aeron aeron;
    private final String directory;
    private final DatagramCounts datagrams;
    private final Map<Integer, Integer> systemCounterIds;
    private final AeronOptions options;

    private AeronDriver(MediaDriver driver, Aeron aeron, String directory, DatagramCounts datagrams,
                        AeronOptions options) {
        this.driver = driver;
        this.aeron = aeron;
        this.directory = directory;
        this.datagrams = datagrams;
        this.options = options;
        this.systemCounterIds = findSystemCounters(aeron.countersReader());
    }

    static AeronDriver start(AeronOptions options, Consumer<MediaDriver.Context> customizer) {
        return start(options, customizer, baseDirectory());
    }

    /** As {@link #start(AeronOptions, Consumer)} with the embedded driver's directory under {@code base}. */
    static AeronDriver start(AeronOptions options, Consumer<MediaDriver.Context> customizer, File base) {
        if (options.aeronDir() != null) {
            Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(options.aeronDir()));
            return new AeronDriver(null, aeron, options.aeronDir(), null, options);
        }
        DriverLeftovers.clean(base.toPath());
        String dir = createDirectory(base);
        DatagramCounts datagrams = new DatagramCounts();
        MediaDriver.Context ctx = new MediaDriver.Context()
            .aeronDirectoryName(dir)
            .dirDeleteOnStart(false) // created empty just now, by us
            .dirDeleteOnShutdown(true)
            .warnIfDirectoryExists(false)
            // Every term buffer's pages are taken when its log is created, where the driver checks the free
            // space first: a /dev/shm too small fails the endpoint's opening with a message. Sparse (Aeron's
            // default), the pages were taken as the terms first filled, and a full /dev/shm faulted (SIGBUS)
            // inside the driver's and the sender's threads mid-step.
            .termBufferSparseFile(false)
            .threadingMode(options.threading())
            .mtuLength(options.mtuBytes())
            .publicationTermBufferLength(options.termLengthBytes())
            .ipcTermBufferLength(64 * 1024)
            .sendChannelEndpointSupplier(datagrams::newSendEndpoint)
            .receiveChannelEndpointSupplier(datagrams::newReceiveEndpoint);
        idleStrategies(ctx, options.threading());
        customizer.accept(ctx);
        long freeBytes = base.getUsableSpace();
        MediaDriver driver = null;
        Aeron aeron = null;
        try {
            driver = MediaDriver.launchEmbedded(ctx);
            aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(driver.aeronDirectoryName()));
            return new AeronDriver(driver, aeron, driver.aeronDirectoryName(), datagrams, options);
        } catch (RuntimeException | InternalError e) {
            CloseHelper.quietCloseAll(aeron, driver);
            IoUtil.delete(new File(dir), true);
            if (e instanceof InternalError) {
                // The JVM's word for SIGBUS on a mapped file: the driver's files did not fit.
                throw new IllegalStateException(noRoom(base, freeBytes));
            }
            throw e;
        }
    }

    /**
     * A new directory under {@code base} (world-writable /dev/shm) named {@code lossprobe-aeron-<pid>-<n>-<random>}.
     * mkdir fails on anything already at the name, a planted link included; and the random part means nobody can
     * plant one in the moment before. With a predictable name, a link planted there would have been taken for the
     * driver's directory and deleted through on shutdown (Agrona's delete follows links), as root anywhere.
     */
    private static String createDirectory(File base) {
        byte[] random = new byte[4];
        for (int attempt = 0; ; attempt++) {
            java.util.concurrent.ThreadLocalRandom.current().nextBytes(random);
            java.nio.file.Path dir = base.toPath().resolve(DIR_PREFIX + ProcessHandle.current().pid() + "-"
                + SEQUENCE.incrementAndGet() + "-" + java.util.HexFormat.of().formatHex(random));
            try {
                return java.nio.file.Files.createDirectory(dir).toAbsolutePath().toString();
            } catch (java.nio.file.FileAlreadyExistsException e) {
                if (attempt >= 16) {
                    throw new IllegalStateException("cannot create a directory for the Aeron media driver in " + base
                        + ": every name tried is taken");
                }
            } catch (java.io.IOException e) {
                throw new IllegalStateException("cannot create a directory for the Aeron media driver in " + base
                    + ": " + e.getMessage());
            }
        }
    }

    /** One line for a driver directory that does not fit in {@code base}, which had {@code freeBytes} free. */
    static String noRoom(File base, long freeBytes) {
        return "no room for the Aeron media driver's files in " + base + " (" + (freeBytes >> 20)
            + " MiB free): free some, or attach to a running driver with -X aeron.dir=DIR";
    }

    /**
     * The driver refused a term buffer's log for want of space (it checks before creating each): one line that
     * says what a run needs, instead of Aeron's "insufficient usable storage ... errorCodeValue=12".
     */
    RuntimeException noRoomForTerms(io.aeron.exceptions.RegistrationException e) {
        if (e.errorCode() != io.aeron.ErrorCode.STORAGE_SPACE) {
            return e;
        }
        File dir = new File(directory);
        return new IllegalStateException("no room for the Aeron term buffers in " + dir.getParent() + " ("
            + (dir.getUsableSpace() >> 20) + " MiB free; each flow's log takes 3 x aeron.termLength = "
            + ((3L * options.termLengthBytes()) >> 10) + " KiB at each end): free some, or lower -X aeron.termLength "
            + "or --ports");
    }

    /** /dev/shm keeps the term buffers in memory; elsewhere they would be written back to disk. */
    static File baseDirectory() {
        File shm = new File("/dev/shm");
        return shm.isDirectory() && shm.canWrite() ? shm : new File(System.getProperty("java.io.tmpdir"));
    }

    /**
     * Idle strategies that back off to a 100 us park: busy-spinning driver threads starve the probe's own sender
     * and receiver on a small machine, and parking longer would add its length to every delay at low rates.
     */
    private static void idleStrategies(MediaDriver.Context ctx, ThreadingMode mode) {
        switch (mode) {
            case SHARED -> ctx.sharedIdleStrategy(networkIdle());
            case SHARED_NETWORK -> ctx.sharedNetworkIdleStrategy(networkIdle()).conductorIdleStrategy(conductorIdle());
            case DEDICATED -> ctx.senderIdleStrategy(networkIdle()).receiverIdleStrategy(networkIdle())
                .conductorIdleStrategy(conductorIdle());
            default -> {
                // INVOKER: the caller drives the conductor; not offered as an option value that works here.
            }
        }
    }

    static IdleStrategy networkIdle() {
        return new BackoffIdleStrategy(10, 20, 1_000, 100_000);
    }

    private static IdleStrategy conductorIdle() {
        return new BackoffIdleStrategy(10, 20, 1_000, 1_000_000);
    }

    private static Map<Integer, Integer> findSystemCounters(CountersReader counters) {
        Map<Integer, Integer> ids = new HashMap<>();
        counters.forEach((counterId, typeId, keyBuffer, label) -> {
            if (typeId == AeronCounters.DRIVER_SYSTEM_COUNTER_TYPE_ID) {
                ids.put(keyBuffer.getInt(0), counterId);
            }
        });
        return ids;
    }

    Aeron aeron() {
        return aeron;
    }

    AeronOptions options() {
        return options;
    }

    String directory() {
        return directory;
    }

    boolean embedded() {
        return driver != null;
    }

    /** Datagrams counted by the embedded driver's channel endpoints; null when attached to an external driver. */
    DatagramCounts datagrams() {
        return datagrams;
    }

    /** The driver-wide counter's current value, or 0 when this driver does not have it. */
    long system(SystemCounterDescriptor descriptor) {
        Integer id = systemCounterIds.get(descriptor.id());
        return id == null ? 0 : aeron.countersReader().getCounterValue(id);
    }

    /**
     * Adds up the per-stream counters of type {@code typeId} by flow (stream id {@code STREAM_ID_BASE + flow}),
     * counting only the sessions {@code sessionOf} accepts for that flow.
     */
    long[] perFlow(int typeId, int flows, SessionFilter sessionOf) {
        return perFlow(typeId, AeronOptions.STREAM_ID_BASE, flows, sessionOf);
    }

    /** As {@link #perFlow(int, int, SessionFilter)} for the streams {@code streamIdBase + flow} (e.g. replies). */
    long[] perFlow(int typeId, int streamIdBase, int flows, SessionFilter sessionOf) {
        long[] sums = new long[flows];
        CountersReader counters = aeron.countersReader();
        counters.forEach((counterId, type, key, label) -> {
            if (type != typeId) {
                return;
            }
            int flow = AeronOptions.flowOf(key.getInt(io.aeron.driver.status.StreamCounter.STREAM_ID_OFFSET),
                streamIdBase, flows);
            if (flow >= 0 && sessionOf.accepts(flow,
                key.getInt(io.aeron.driver.status.StreamCounter.SESSION_ID_OFFSET))) {
                sums[flow] += counters.getCounterValue(counterId);
            }
        });
        return sums;
    }

    /**
     * Bytes the receiving driver reported lost (loss-report entries) per flow, and the number of observations.
     * The report maps only while it is read, so no mapping outlives the call.
     */
    LossReport lossReport(int flows, SessionFilter sessionOf) {
        return lossReport(AeronOptions.STREAM_ID_BASE, flows, sessionOf);
    }

    /** As {@link #lossReport(int, SessionFilter)} for the streams {@code streamIdBase + flow} (e.g. replies). */
    LossReport lossReport(int streamIdBase, int flows, SessionFilter sessionOf) {
        long[] bytes = new long[flows];
        long[] observations = new long[flows];
        File file = LossReportUtil.file(directory);
        if (!file.exists()) {
            return new LossReport(bytes, observations);
        }
        MappedByteBuffer mapped = LossReportUtil.mapLossReportReadOnly(directory);
        try {
            LossReportReader.read(new UnsafeBuffer(mapped), (count, totalBytesLost, first, last, sessionId, streamId,
                                                              channel, source) -> {
                int flow = AeronOptions.flowOf(streamId, streamIdBase, flows);
                if (flow >= 0 && sessionOf.accepts(flow, sessionId)) {
                    bytes[flow] += totalBytesLost;
                    observations[flow] += count;
                }
            });
        } finally {
            IoUtil.unmap(mapped);
        }
        return new LossReport(bytes, observations);
    }

    @Override
    public void close() {
        CloseHelper.closeAll(aeron, driver);
        if (driver != null) {
            IoUtil.delete(new File(directory), true);
        }
    }

    /** Which sessions of a flow's stream belong to this run (an external driver may carry others). */
    @FunctionalInterface
    interface SessionFilter {
        boolean accepts(int flow, int sessionId);
    }

    /** Cumulative loss-report figures per flow. */
    record LossReport(long[] bytesLost, long[] observations) {
    }

    /**
     * Waits until {@code reading} (a sum of repair counters) has not moved for {@code quietNs}, or {@code timeoutNs}
     * passed: NAKs and retransmissions still in flight when a step's data is all in must be counted in that step.
     * Polls on the calling (the engine's) thread.
     */
    static void awaitSettled(java.util.function.LongSupplier reading, long quietNs, long timeoutNs) {
        long start = System.nanoTime();
        long last = reading.getAsLong();
        long stableSince = start;
        while (true) {
            long now = System.nanoTime();
            if (now - stableSince >= quietNs || now - start >= timeoutNs) {
                return;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(SETTLE_POLL_NS);
            long v = reading.getAsLong();
            if (v != last) {
                last = v;
                stableSince = System.nanoTime();
            }
        }
    }

    /** Quiet time that ends a settle: well above a NAK's round trip on a LAN, below Aeron's 60 ms linger. */
    static final long SETTLE_QUIET_NS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(20);
    static final long SETTLE_TIMEOUT_NS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    private static final long SETTLE_POLL_NS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(2);
}
