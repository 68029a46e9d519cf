package io.lossprobe.aeron;

import io.aeron.AeronCounters;
import io.aeron.ExclusivePublication;
import io.lossprobe.core.pacing.SendLoop;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.TransportReport;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.agrona.CloseHelper;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/**
 * One exclusive publication per flow towards {@code host:basePort+i}, written by the send loop on one sending
 * thread. The driver's sender agent turns the committed frames into datagrams of up to an MTU.
 */
final class AeronSender implements SenderEndpoint {
    static final String THREAD_NAME = "lossprobe-aeron-tx";
    /** Shorter waits than this are spent in the idle strategy's spin/yield/short park instead of one park. */
    private static final long PARK_THRESHOLD_NS = 50_000;

    private final AeronDriver driver;
    private final Consumer<AeronDriver> release;
    private final ExclusivePublication[] publications;
    private final AeronWriter[] writers;
    private final ExecutorService thread;
    private final DriverCounters counters;
    private final Map<String, Long> environment;
    private long[] nakAtStart;
    private long[] bpeAtStart;
    private long[] episodesAtStart;
    private long[] adminAtStart;
    private long[] notConnectedAtStart;
    private long acceptedAtStart;
    private long datagramsAtStart;
    private boolean closed;

    private AeronSender(AeronDriver driver, Consumer<AeronDriver> release, ExclusivePublication[] publications,
                        AeronWriter[] writers) {
        this.driver = driver;
        this.release = release;
        this.publications = publications;
        this.writers = writers;
        this.counters = new DriverCounters(driver, DriverCounters.SENDER);
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, THREAD_NAME);
            t.setDaemon(true);
            return t;
        });
        Map<String, Long> env = new HashMap<>();
        env.put("termLength", (long) publications[0].termBufferLength());
        env.put("mtu", (long) driver.options().mtuBytes());
        env.put("maxPayloadLength", (long) publications[0].maxPayloadLength());
        env.put("embeddedDriver", driver.embedded() ? 1L : 0L);
        this.environment = env;
    }

    static AeronSender open(SenderSpec spec, AeronDriver driver, Consumer<AeronDriver> release) throws Exception {
        int flows = spec.plan().ports();
        ExclusivePublication[] publications = new ExclusivePublication[flows];
        try {
            AeronWriter[] writers = new AeronWriter[flows];
            for (int i = 0; i < flows; i++) {
                publications[i] = driver.aeron().addExclusivePublication(
                    driver.options().publicationChannel(spec.targetHost(), spec.plan().port(i)),
                    AeronOptions.streamId(i));
                writers[i] = new AeronWriter(publications[i], spec.plan().messageSize());
            }
            awaitConnected(publications, spec, driver.options().connectTimeoutMs());
            return new AeronSender(driver, release, publications, writers);
        } catch (Exception | Error e) {
            CloseHelper.quietCloseAll(publications);
            throw e;
        }
    }

    /** A publication is connected once its subscriber's driver answered the setup with a status message. */
    private static void awaitConnected(ExclusivePublication[] publications, SenderSpec spec, long timeoutMs)
        throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (int i = 0; i < publications.length; i++) {
            while (!publications[i].isConnected()) {
                if (System.nanoTime() >= deadline) {
                    throw new IOException("no Aeron subscriber answered on " + spec.targetHost() + ":"
                        + spec.plan().port(i) + " within " + timeoutMs + " ms (is the receiver running?)");
                }
                LockSupport.parkNanos(1_000_000);
            }
        }
    }

    @Override
    public MessageWriter writer(int flow) {
        return writers[flow];
    }

    @Override
    public CompletableFuture<Void> drive(SendLoop loop) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        thread.execute(() -> {
            try {
                run(loop);
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        return done;
    }

    /** Sends what is due; parks until the next message is due, backs off while every flow is back-pressured. */
    private static void run(SendLoop loop) throws InterruptedException {
        IdleStrategy idle = new BackoffIdleStrategy(10, 20, 1_000, 100_000);
        while (true) {
            long now = System.nanoTime();
            int work = loop.doWork(now);
            if (loop.isDone()) {
                return;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("Aeron send loop interrupted");
            }
            if (work > 0) {
                idle.reset();
                continue;
            }
            now = System.nanoTime();
            long waitNs = loop.nextDueNs(now) - now;
            if (waitNs > PARK_THRESHOLD_NS) {
                LockSupport.parkNanos(waitNs);
            } else {
                idle.idle(0);
            }
        }
    }

    @Override
    public void beginStep(int step) {
        counters.beginStep();
        nakAtStart = driver.perFlow(AeronCounters.DRIVER_SENDER_NAKS_RECEIVED_TYPE_ID, writers.length, this::ours);
        bpeAtStart = driver.perFlow(AeronCounters.DRIVER_SENDER_BPE_TYPE_ID, writers.length, this::ours);
        episodesAtStart = new long[writers.length];
        adminAtStart = new long[writers.length];
        notConnectedAtStart = new long[writers.length];
        for (int i = 0; i < writers.length; i++) {
            episodesAtStart[i] = writers[i].backPressureEpisodes();
            adminAtStart[i] = writers[i].adminActions();
            notConnectedAtStart[i] = writers[i].notConnected() + writers[i].closedOrMaxPosition();
        }
        acceptedAtStart = accepted();
        datagramsAtStart = driver.datagrams() == null ? 0 : driver.datagrams().sent();
    }

    private long accepted() {
        long sum = 0;
        for (AeronWriter w : writers) {
            sum += w.accepted();
        }
        return sum;
    }

    private boolean ours(int flow, int sessionId) {
        return publications[flow].sessionId() == sessionId;
    }

    @Override
    public TransportReport endStep() {
        Map<String, Long> totals = new HashMap<>(counters.deltas());
        long[] naks = driver.perFlow(AeronCounters.DRIVER_SENDER_NAKS_RECEIVED_TYPE_ID, writers.length, this::ours);
        long[] bpe = driver.perFlow(AeronCounters.DRIVER_SENDER_BPE_TYPE_ID, writers.length, this::ours);
        Map<Integer, Map<String, Long>> flows = new HashMap<>();
        long episodes = 0;
        long admin = 0;
        long refused = 0;
        for (int i = 0; i < writers.length; i++) {
            Map<String, Long> f = new HashMap<>();
            f.put("aeron.sndNaksReceived", naks[i] - nakAtStart[i]);
            f.put("aeron.sndBpe", bpe[i] - bpeAtStart[i]);
            long e = writers[i].backPressureEpisodes() - episodesAtStart[i];
            long a = writers[i].adminActions() - adminAtStart[i];
            long r = writers[i].notConnected() + writers[i].closedOrMaxPosition() - notConnectedAtStart[i];
            f.put("aeron.backPressureEpisodes", e);
            f.put("aeron.adminActions", a);
            f.put("aeron.refusedNotConnectedOrClosed", r);
            episodes += e;
            admin += a;
            refused += r;
            flows.put(i, f);
        }
        totals.put("aeron.backPressureEpisodes", episodes);
        totals.put("aeron.adminActions", admin);
        totals.put("aeron.refusedNotConnectedOrClosed", refused);
        // Messages over the step's whole span (warm-up, window, drain), to set against the datagram count.
        totals.put("aeron.messagesAccepted", accepted() - acceptedAtStart);
        if (driver.datagrams() != null && driver.datagrams().countingSends()) {
            totals.put("aeron.datagramsSent", driver.datagrams().sent() - datagramsAtStart);
        }
        return new TransportReport(totals, flows);
    }

    @Override
    public Map<String, Long> environment() {
        return environment;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        thread.shutdownNow();
        boolean stopped;
        try {
            stopped = thread.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopped = false;
        }
        CloseHelper.quietCloseAll(publications);
        release.accept(driver);
        if (!stopped) {
            throw new IllegalStateException(THREAD_NAME + " did not stop within 10 s");
        }
    }
}
