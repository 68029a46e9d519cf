package io.lossprobe.aeron;

import io.aeron.AeronCounters;
import io.aeron.Image;
import io.aeron.Subscription;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageHeader;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.agrona.BitUtil;
import org.agrona.CloseHelper;
import org.agrona.concurrent.AgentRunner;

/**
 * One subscription per flow on {@code bind:basePort+i}, all polled by one {@link ReceivePoller} thread.
 * Reports the receiving driver's counters, the per-stream NAK counter and the loss-report entries per step.
 */
final class AeronReceiver implements ReceiverEndpoint {
    private static final long COMMAND_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);

    private final AeronDriver driver;
    private final Consumer<AeronDriver> release;
    private final Subscription[] subscriptions;
    private final ReceivePoller poller;
    private final AgentRunner runner;
    private final DriverCounters counters;
    private final int frameLength;
    private final boolean unfragmented;
    private long[] naksAtStart;
    private long[] lossBytesAtStart;
    private long[] lossObservationsAtStart;
    private long datagramsAtStart;
    private boolean closed;

    private AeronReceiver(AeronDriver driver, Consumer<AeronDriver> release, Subscription[] subscriptions,
                          ReceivePoller poller, int messageSize) {
        this.driver = driver;
        this.release = release;
        this.subscriptions = subscriptions;
        this.poller = poller;
        this.counters = new DriverCounters(driver, DriverCounters.RECEIVER);
        // One message per frame when it fits one MTU: the frame is the 32-byte data header plus the message,
        // aligned to 32 bytes, which turns the loss report's bytes back into messages.
        this.frameLength = BitUtil.align(io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH + messageSize,
            io.aeron.logbuffer.FrameDescriptor.FRAME_ALIGNMENT);
        this.unfragmented = messageSize <= driver.options().mtuBytes() - io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;
        this.runner = new AgentRunner(AeronDriver.networkIdle(), Throwable::printStackTrace, null, poller);
        AgentRunner.startOnThread(runner);
    }

    static AeronReceiver open(ReceiverSpec spec, AeronDriver driver, Consumer<AeronDriver> release) {
        int flows = spec.flows().length;
        Subscription[] subscriptions = new Subscription[flows];
        try {
            for (int i = 0; i < flows; i++) {
                subscriptions[i] = driver.aeron().addSubscription(
                    driver.options().subscriptionChannel(spec.bindAddress(), spec.plan().port(i)),
                    AeronOptions.streamId(i));
            }
            return new AeronReceiver(driver, release, subscriptions, new ReceivePoller(subscriptions, spec.flows()),
                spec.plan().messageSize());
        } catch (RuntimeException | Error e) {
            CloseHelper.quietCloseAll(subscriptions);
            throw e;
        }
    }

    @Override
    public void onReceiveThread(Runnable action) throws Exception {
        if (poller.onAgentThread()) {
            action.run();
            return;
        }
        FutureTask<Void> task = new FutureTask<>(action, null);
        long deadline = System.nanoTime() + COMMAND_TIMEOUT_NS;
        while (!poller.offer(task)) {
            if (System.nanoTime() >= deadline) {
                throw new IllegalStateException("the Aeron receive thread did not take a command within 30 s");
            }
            Thread.onSpinWait();
        }
        task.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    @Override
    public void setPaused(boolean paused) {
        poller.paused(paused);
    }

    @Override
    public void beginStep(int step) {
        counters.beginStep();
        naksAtStart = driver.perFlow(AeronCounters.DRIVER_RECEIVER_NAKS_SENT_TYPE_ID, subscriptions.length,
            this::ours);
        AeronDriver.LossReport report = driver.lossReport(subscriptions.length, this::ours);
        lossBytesAtStart = report.bytesLost();
        lossObservationsAtStart = report.observations();
        datagramsAtStart = driver.datagrams() == null ? 0 : driver.datagrams().received();
    }

    /** A session belongs to this run when it is one of the subscription's images (an external driver may carry others). */
    private boolean ours(int flow, int sessionId) {
        List<Image> images = subscriptions[flow].images();
        for (int i = 0; i < images.size(); i++) {
            if (images.get(i).sessionId() == sessionId) {
                return true;
            }
        }
        return false;
    }

    @Override
    public TransportReport endStep() {
        Map<String, Long> totals = new HashMap<>(counters.deltas());
        int n = subscriptions.length;
        long[] naks = driver.perFlow(AeronCounters.DRIVER_RECEIVER_NAKS_SENT_TYPE_ID, n, this::ours);
        AeronDriver.LossReport report = driver.lossReport(n, this::ours);
        Map<Integer, Map<String, Long>> flows = new HashMap<>();
        long lossBytes = 0;
        long lossObservations = 0;
        for (int i = 0; i < n; i++) {
            Map<String, Long> f = new HashMap<>();
            long bytes = report.bytesLost()[i] - lossBytesAtStart[i];
            long observations = report.observations()[i] - lossObservationsAtStart[i];
            f.put("aeron.rcvNaksSent", naks[i] - naksAtStart[i]);
            f.put("aeron.lossReportBytes", bytes);
            f.put("aeron.lossReportObservations", observations);
            if (unfragmented) {
                f.put("aeron.lossReportFrames", bytes / frameLength);
            }
            lossBytes += bytes;
            lossObservations += observations;
            flows.put(i, f);
        }
        totals.put("aeron.lossReportBytes", lossBytes);
        totals.put("aeron.lossReportObservations", lossObservations);
        if (unfragmented) {
            totals.put("aeron.lossReportFrames", lossBytes / frameLength);
        }
        if (driver.datagrams() != null && driver.datagrams().countingReceives()) {
            totals.put("aeron.datagramsReceived", driver.datagrams().received() - datagramsAtStart);
        }
        return new TransportReport(totals, flows);
    }

    /** The driver and client this receiver uses; for tests that read the driver's counters. */
    AeronDriver driver() {
        return driver;
    }

    @Override
    public Map<String, Long> environment() {
        return Map.of("termLength", (long) driver.options().termLengthBytes(),
            "reliable", driver.options().reliable() ? 1L : 0L,
            "headerLength", (long) MessageHeader.LENGTH);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            CloseHelper.closeAll(runner);
        } finally {
            CloseHelper.quietCloseAll(subscriptions);
            release.accept(driver);
        }
    }
}
