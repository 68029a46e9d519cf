package io.lossprobe.aeron;

import static io.lossprobe.aeron.AeronProbeCounter.DATAGRAMS_RECEIVED;
import static io.lossprobe.aeron.AeronProbeCounter.FOREIGN_IMAGES;
import static io.lossprobe.aeron.AeronProbeCounter.LOSS_REPORT_BYTES;
import static io.lossprobe.aeron.AeronProbeCounter.LOSS_REPORT_FRAMES;
import static io.lossprobe.aeron.AeronProbeCounter.LOSS_REPORT_OBSERVATIONS;
import static io.lossprobe.aeron.AeronProbeCounter.RCV_NAKS_SENT;
import static io.lossprobe.aeron.AeronProbeCounter.REPLIES_DROPPED_BACK_PRESSURED;
import static io.lossprobe.aeron.AeronProbeCounter.REPLIES_DROPPED_NOT_CONNECTED;
import static io.lossprobe.aeron.AeronProbeCounter.REPLY_BACK_PRESSURE_EPISODES;

import io.aeron.AeronCounters;
import io.aeron.ExclusivePublication;
import io.aeron.Image;
import io.aeron.Subscription;
import io.lossprobe.core.transport.Closing;
import io.lossprobe.core.transport.EchoReplies;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageHeader;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.agrona.BitUtil;
import org.agrona.CloseHelper;
import org.agrona.concurrent.AgentRunner;

/**
 * One subscription per flow on {@code bind:basePort+i}, all polled by one {@link ReceivePoller} thread.
 * Reports the receiving driver's counters, the per-stream NAK counter and the loss-report entries per step, each
 * over the whole step (warm-up, window and drain): sampled where no repair is in motion, so they agree exactly.
 *
 * <p>Echo mode: one exclusive publication per flow back to the requester, {@code echoHost:basePort+ports+i}
 * (the plan's bind address when the spec has no echo host: requester and responder in one process) on stream
 * {@link AeronOptions#replyStreamId}; the receive thread answers through an {@link EchoReplier} per flow.
 *
 * <p>Behind a NAT the flow's sender is a dynamic multi-destination-cast publication, and {@link #punch} subscribes the
 * flow anew with the publication's control address, so that the driver's status messages leave from the flow's
 * own socket towards it (Aeron's punch); the flow's accounting stays as it was.
 */
final class AeronReceiver implements ReceiverEndpoint {

    private final AeronDriver driver;
    private final Consumer<AeronDriver> release;
    private final Subscription[] subscriptions;
    private final ReceivePoller poller;
    /** Echo mode: the flows' reply paths; null in stream mode. */
    private final EchoReplier[] repliers;
    /** Echo mode: the replies sent and dropped, per flow; null in stream mode. */
    private final EchoReplies replies;
    private final ExclusivePublication[] replyPublications;
    private long[][] replyCountsAtStart;
    private final AgentRunner runner;
    private final DriverCounters counters;
    private final int frameLength;
    private final int[] ports;
    /** Frames refused per flow (another source) when the step began. */
    private final long[] refusedAtStart;
    /** Per flow: the one session that is the flow's sender's ({@link AeronSessions}). */
    private final int[] sessions;
    /** Frames of another session, and the SETUPs among them, per flow when the step began. */
    private final long[] foreignSessionAtStart;
    private final long[] foreignSetupsAtStart;
    private final boolean unfragmented;
    private long[] naksAtStart;
    private long[] lossBytesAtStart;
    private long[] lossObservationsAtStart;
    private long datagramsAtStart;
    private boolean closed;
    /** Where each flow's subscription sends its status messages after {@link #punch}; null before. */
    private final String[] punchedTo;
    private final String bindAddress;
    /** The only address data may come from (the peer), or null for any. */
    private final java.net.InetAddress onlyFrom;

    private AeronReceiver(AeronDriver driver, Consumer<AeronDriver> release, Subscription[] subscriptions,
                          ReceivePoller poller, int messageSize, EchoReplier[] repliers, EchoReplies replies,
                          ExclusivePublication[] replyPublications, int[] ports, int[] sessions, String bindAddress,
                          java.net.InetAddress onlyFrom) {
        this.ports = ports;
        this.bindAddress = bindAddress;
        this.onlyFrom = onlyFrom;
        this.punchedTo = new String[ports.length];
        this.sessions = sessions;
        this.refusedAtStart = new long[ports.length];
        this.foreignSessionAtStart = new long[ports.length];
        this.foreignSetupsAtStart = new long[ports.length];
        this.driver = driver;
        this.release = release;
        this.subscriptions = subscriptions;
        this.poller = poller;
        this.repliers = repliers;
        this.replies = replies;
        this.replyPublications = replyPublications;
        this.counters = new DriverCounters(driver, DriverCounters.RECEIVER);
        // One message per frame when it fits one MTU: the frame is the 32-byte data header plus the message,
        // aligned to 32 bytes, which turns the loss report's bytes back into messages.
        this.frameLength = BitUtil.align(io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH + messageSize,
            io.aeron.logbuffer.FrameDescriptor.FRAME_ALIGNMENT);
        this.unfragmented = messageSize <= driver.options().mtuBytes()
                - io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;
        this.runner = new AgentRunner(AeronDriver.networkIdle(), poller::onError, null, poller);
        ReceivePoller.start(runner);
    }

    static AeronReceiver open(ReceiverSpec spec, AeronDriver driver, Consumer<AeronDriver> release) {
        int flows = spec.flows().length;
        boolean echo = spec.plan().echo();
        if (echo) {
            AeronOptions.checkReplyPorts(spec.plan());
        }
        Subscription[] subscriptions = new Subscription[flows];
        ExclusivePublication[] replyPublications = echo ? new ExclusivePublication[flows] : null;
        try {
            EchoReplier[] repliers = null;
            EchoReplies replies = echo ? new EchoReplies(spec.flows()) : null;
            if (echo) {
                // Not awaited here: the requester subscribes when its sender opens, after this receiver. Until
                // then a reply would be dropped as not connected, but nothing is answered before the first step.
                String host = replyHost(spec);
                repliers = new EchoReplier[flows];
                for (int i = 0; i < flows; i++) {
                    replyPublications[i] = driver.aeron().addExclusivePublication(
                        driver.options().publicationChannel(host, AeronOptions.replyPort(spec.plan(), i),
                            AeronSessions.reply(spec.flows()[i].auth(), i)),
                        AeronOptions.replyStreamId(i));
                    repliers[i] = new EchoReplier(new AeronWriter(replyPublications[i], spec.plan().messageSize()),
                        replies.flow(i));
                }
            }
            java.net.InetAddress onlyFrom = spec.peer() == null ? null
                : java.net.InetAddress.getByName(spec.peer());
            int[] sessions = new int[flows];
            for (int i = 0; i < flows; i++) {
                sessions[i] = AeronSessions.request(spec.flows()[i].auth(), i);
                if (driver.datagrams() != null) {
                    // Registered before the subscription creates the endpoint, which reads them once.
                    if (onlyFrom != null) {
                        driver.datagrams().allowOnly(spec.plan().port(i), onlyFrom);
                    }
                    driver.datagrams().expectSession(spec.plan().port(i), sessions[i]);
                }
                subscriptions[i] = driver.aeron().addSubscription(
                    driver.options().subscriptionChannel(spec.bindAddress(), spec.plan().port(i), sessions[i]),
                    AeronOptions.streamId(i));
            }
            return new AeronReceiver(driver, release, subscriptions,
                new ReceivePoller(ReceivePoller.ROLE_NAME, subscriptions, spec.flows(), repliers),
                spec.plan().messageSize(), repliers, replies, replyPublications, ports(spec), sessions,
                spec.bindAddress(), onlyFrom);
        } catch (java.net.UnknownHostException e) {
            CloseHelper.quietCloseAll(subscriptions);
            throw new IllegalArgumentException("unknown peer address " + spec.peer(), e);
        } catch (RuntimeException | Error e) {
            CloseHelper.quietCloseAll(subscriptions);
            if (replyPublications != null) {
                CloseHelper.quietCloseAll(replyPublications);
            }
            throw e;
        }
    }

    private static int[] ports(ReceiverSpec spec) {
        int[] out = new int[spec.flows().length];
        for (int i = 0; i < out.length; i++) {
            out[i] = spec.plan().port(i);
        }
        return out;
    }

    /**
     * Where replies go: the requester's address, or with none given (requester in this process) the plan's bind
     * address; a wildcard bind address means this host, so replies then go to loopback.
     */
    static String replyHost(ReceiverSpec spec) {
        String host = spec.echoHost() != null ? spec.echoHost() : spec.plan().bindAddress();
        try {
            java.net.InetAddress address = java.net.InetAddress.getByName(host);
            if (address.isAnyLocalAddress()) {
                return address instanceof java.net.Inet6Address ? "::1" : "127.0.0.1";
            }
        } catch (java.net.UnknownHostException e) {
            // Left to Aeron, which reports the unresolvable endpoint.
        }
        return host;
    }

    /** Every flow is polled by the one receiving agent: each flow's action runs there, in turn. */
    @Override
    public void onFlowThreads(java.util.function.IntConsumer action) throws Exception {
        poller.runOnAgent(() -> {
            for (int i = 0; i < subscriptions.length; i++) {
                action.accept(i);
            }
        });
    }

    /** How long {@link #punch} waits for the flow's old subscription's endpoint to close and the new one to open. */
    static final long RESUBSCRIBE_TIMEOUT_NS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);

    /**
     * Aeron's punch: the flow's sender behind a NAT is a dynamic MDC publication whose control socket is {@code to},
     * which sends nothing until a status message arrives there. Subscribes the flow anew on its port with
     * {@code control=to} ({@link AeronOptions#natSubscriptionChannel}), so the driver sends status messages (and
     * its periodic requests for a SETUP) from the flow's own socket to {@code to}; the publication then sends to the
     * address and port they arrived from, the NAT's mapping of that socket. {@code datagram} (lossprobe's punch
     * token) is not sent: nothing can send from the driver's socket but the driver. Idempotent: a flow already
     * subscribed towards {@code to} is left as it is (Aeron repeats its requests itself). The old subscription is
     * closed on the receive thread, the new one takes its place there; the flow's handler, and so its accounting,
     * the session and source filters and its per-port counts stay. Never during a step.
     */
    @Override
    public void punch(int flow, java.net.InetSocketAddress to, byte[] datagram) throws Exception {
        if (flow < 0 || flow >= subscriptions.length) {
            throw new IllegalArgumentException("flow " + flow + " of " + subscriptions.length);
        }
        if (onlyFrom != null && !onlyFrom.equals(to.getAddress())) {
            throw new IllegalArgumentException("flow " + flow + ": a punch to " + to + ", not to the peer "
                + onlyFrom.getHostAddress());
        }
        String control = AeronOptions.endpoint(to.getAddress().getHostAddress(), to.getPort());
        if (control.equals(punchedTo[flow])) {
            return;
        }
        Subscription old = subscriptions[flow];
        poller.runOnAgent(old::close);
        long deadline = System.nanoTime() + RESUBSCRIBE_TIMEOUT_NS;
        awaitEndpointClosed(old, flow, deadline);
        String channel = driver.options().natSubscriptionChannel(bindAddress, ports[flow], sessions[flow], control);
        Subscription fresh = subscribe(channel, AeronOptions.streamId(flow), deadline);
        poller.runOnAgent(() -> subscriptions[flow] = fresh);
        punchedTo[flow] = control;
    }

    /**
     * Waits until the driver closed {@code old}'s channel endpoint, which frees the port: the endpoint's status
     * counter is freed after its socket is closed (ReceiveChannelEndpoint.close), and removing a subscription is
     * asynchronous in Aeron's client.
     */
    private void awaitEndpointClosed(Subscription old, int flow, long deadline) {
        org.agrona.concurrent.status.CountersReader counters = driver.aeron().countersReader();
        int id = old.channelStatusId();
        org.agrona.concurrent.IdleStrategy idle = AeronDriver.networkIdle();
        while (counters.getCounterState(id) == org.agrona.concurrent.status.CountersReader.RECORD_ALLOCATED
            && counters.getCounterRegistrationId(id) == old.registrationId()) {
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException("flow " + flow + " (port " + ports[flow] + "): the Aeron driver did"
                    + " not close its subscription's endpoint within "
                    + java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(RESUBSCRIBE_TIMEOUT_NS) + " s");
            }
            idle.idle();
        }
    }

    /** Adds the subscription, again while the driver refuses it (the port not yet free) until {@code deadline}. */
    private Subscription subscribe(String channel, int streamId, long deadline) {
        org.agrona.concurrent.IdleStrategy idle = AeronDriver.networkIdle();
        while (true) {
            try {
                return driver.aeron().addSubscription(channel, streamId);
            } catch (io.aeron.exceptions.RegistrationException e) {
                if (System.nanoTime() - deadline >= 0) {
                    throw e;
                }
                idle.idle();
            }
        }
    }

    @Override
    public void setPaused(boolean paused) {
        poller.paused(paused);
    }

    @Override
    public void beginStep(int step) throws Exception {
        if (driver.options().multicast() != null) {
            awaitImages();
        }
        poller.errors().beginStep();
        if (repliers != null) {
            replies.beginStep();
            replyCountsAtStart = replyCounts();
        }
        datagramsAtStart = driver.datagrams() == null ? 0 : driver.datagrams().received();
        for (int i = 0; i < ports.length; i++) {
            refusedAtStart[i] = driver.datagrams() == null ? 0 : driver.datagrams().refused(ports[i]);
            foreignSessionAtStart[i] = driver.datagrams() == null ? 0 : driver.datagrams().foreignSession(ports[i]);
            foreignSetupsAtStart[i] = driver.datagrams() == null ? 0 : driver.datagrams().foreignSetups(ports[i]);
        }
        markCounters();
    }

    /**
     * Multicast: the publication is connected once any receiver answered it, so each receiver waits here, before
     * the step's first message, until every flow has an image of its sender's session (the driver asks the
     * publication for a SETUP when it sees the group's heartbeats), up to {@code aeron.connectTimeoutMs}.
     */
    private void awaitImages() throws java.io.IOException {
        long timeoutMs = driver.options().connectTimeoutMs();
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        org.agrona.concurrent.IdleStrategy idle = AeronDriver.networkIdle();
        for (int i = 0; i < subscriptions.length; i++) {
            while (subscriptions[i].imageBySessionId(sessions[i]) == null) {
                if (System.nanoTime() - deadline >= 0) {
                    throw new java.io.IOException("flow " + i + ": no image of the sender's publication from "
                        + driver.options().multicast().source(ports[i]) + " within " + timeoutMs + " ms ("
                        + (driver.options().multicast().mdc() ? "can it reach this receiver at " + bindAddress
                        + ", and this receiver it?)" : "did this receiver join the group on " + bindAddress
                        + "'s interface?)"));
                }
                idle.idle();
            }
        }
    }

    /**
     * The driver's, the streams' and the loss report's counters start here, before the step's first message, read
     * on the engine's thread (shared-memory counters; the receive thread is not asked). Not at the window: after a
     * warm-up NAKs are in motion there, and no two reads (the system counter and the streams', this driver's and
     * the sender's) see the same NAKs (docs/aeron.md, "Why the NAK counts agree").
     */
    private void markCounters() {
        counters.mark();
        naksAtStart = driver.perFlow(AeronCounters.DRIVER_RECEIVER_NAKS_SENT_TYPE_ID, subscriptions.length,
            this::ours);
        AeronDriver.LossReport report = driver.lossReport(subscriptions.length, this::ours);
        lossBytesAtStart = report.bytesLost();
        lossObservationsAtStart = report.observations();
    }

    /**
     * A session is the flow's when it is the one its sender publishes with ({@link AeronSessions}): not any image of
     * the subscription, which a spoofer using the controller's address could add (an external driver may carry
     * other runs' streams too).
     */
    private boolean ours(int flow, int sessionId) {
        return sessionId == sessions[flow];
    }

    /** Images of the flow's stream that are not its sender's session (none while the session filter holds). */
    private long otherImages(int flow) {
        long n = 0;
        List<Image> images = subscriptions[flow].images();
        for (int i = 0; i < images.size(); i++) {
            if (images.get(i).sessionId() != sessions[flow]) {
                n++;
            }
        }
        return n;
    }

    /**
     * Per flow, Aeron's reasons beside {@link EchoReplies}' totals: replies dropped under back pressure, dropped as
     * not connected, back-pressure episodes. Read on the receive thread, which writes them.
     */
    private long[][] replyCounts() throws Exception {
        long[][] out = new long[repliers.length][];
        poller.runOnAgent(() -> {
            for (int i = 0; i < repliers.length; i++) {
                EchoReplier r = repliers[i];
                out[i] = new long[] {r.droppedBackPressured(), r.droppedNotConnected(),
                    r.writer().backPressureEpisodes()};
            }
        });
        return out;
    }

    /**
     * The step's counters, from before its first message to after the NAKs settled: a repair requested at the
     * window's end may still be on its way when the data is in.
     */
    @Override
    public TransportReport endStep() throws Exception {
        AeronDriver.awaitSettled(this::repairsAndNaks, AeronDriver.SETTLE_QUIET_NS, AeronDriver.SETTLE_TIMEOUT_NS);
        Map<String, Long> totals = new HashMap<>(counters.deltas());
        int n = subscriptions.length;
        long[][] replyCounts = repliers == null ? null : replyCounts();
        long[] naks = driver.perFlow(AeronCounters.DRIVER_RECEIVER_NAKS_SENT_TYPE_ID, n, this::ours);
        AeronDriver.LossReport report = driver.lossReport(n, this::ours);
        Map<Integer, Map<String, Long>> flows = new HashMap<>();
        long lossBytes = 0;
        long lossObservations = 0;
        long rcvNaks = 0;
        long foreignImages = 0;
        List<String> notes = new java.util.ArrayList<>(poller.errors().notes());
        for (int i = 0; i < n; i++) {
            Map<String, Long> f = new HashMap<>();
            long bytes = report.bytesLost()[i] - lossBytesAtStart[i];
            long observations = report.observations()[i] - lossObservationsAtStart[i];
            f.put(RCV_NAKS_SENT.key, naks[i] - naksAtStart[i]);
            rcvNaks += naks[i] - naksAtStart[i];
            long images = otherImages(i);
            if (driver.datagrams() != null) {
                // Frames from another source than the controller's, or of another session than the flow's sender's
                // (a spoofer using the controller's address): dropped before the driver saw them.
                long otherSession = driver.datagrams().foreignSession(ports[i]) - foreignSessionAtStart[i];
                images += driver.datagrams().foreignSetups(ports[i]) - foreignSetupsAtStart[i];
                f.put(TransportReport.FOREIGN, driver.datagrams().refused(ports[i]) - refusedAtStart[i]
                    + otherSession);
                if (otherSession > 0) {
                    notes.add("flow " + i + " (port " + ports[i] + "): " + otherSession + " Aeron frame(s) of "
                        + "another session than the flow's sender's, " + images + " of them setting up an image "
                        + "of its own: dropped, not counted (a spoofer using the controller's address)");
                }
            }
            f.put(FOREIGN_IMAGES.key, images);
            foreignImages += images;
            f.put(LOSS_REPORT_BYTES.key, bytes);
            f.put(LOSS_REPORT_OBSERVATIONS.key, observations);
            if (unfragmented) {
                f.put(LOSS_REPORT_FRAMES.key, bytes / frameLength);
            }
            lossBytes += bytes;
            lossObservations += observations;
            if (replyCounts != null) {
                replyDeltas(replyCounts[i], replyCountsAtStart[i], f, totals);
            }
            flows.put(i, f);
        }
        if (replies != null) {
            replies.report(totals, flows);
        }
        totals.put(LOSS_REPORT_BYTES.key, lossBytes);
        totals.put(RCV_NAKS_SENT.key, rcvNaks);
        totals.put(FOREIGN_IMAGES.key, foreignImages);
        totals.put(LOSS_REPORT_OBSERVATIONS.key, lossObservations);
        if (unfragmented) {
            totals.put(LOSS_REPORT_FRAMES.key, lossBytes / frameLength);
        }
        if (driver.datagrams() != null && driver.datagrams().countingReceives()) {
            totals.put(DATAGRAMS_RECEIVED.key, driver.datagrams().received() - datagramsAtStart);
        }
        return new TransportReport(totals, flows, notes);
    }

    /** What the step's end waits on to settle: the repairs, and the NAKs every flow sent. */
    private long repairsAndNaks() {
        long sum = counters.repairSum();
        for (long n : driver.perFlow(AeronCounters.DRIVER_RECEIVER_NAKS_SENT_TYPE_ID, subscriptions.length,
            this::ours)) {
            sum += n;
        }
        return sum;
    }

    /** Echo mode: one flow's reply counts in the step ({@code now - then}) into its map {@code f} and the totals. */
    private static void replyDeltas(long[] now, long[] then, Map<String, Long> f, Map<String, Long> totals) {
        f.put(REPLIES_DROPPED_BACK_PRESSURED.key, now[0] - then[0]);
        f.put(REPLIES_DROPPED_NOT_CONNECTED.key, now[1] - then[1]);
        f.put(REPLY_BACK_PRESSURE_EPISODES.key, now[2] - then[2]);
        for (String key : List.of(REPLIES_DROPPED_BACK_PRESSURED.key,
            REPLIES_DROPPED_NOT_CONNECTED.key, REPLY_BACK_PRESSURE_EPISODES.key)) {
            totals.merge(key, f.get(key), Long::sum);
        }
    }

    /** Flow {@code flow}'s subscription now (for tests). */
    Subscription subscription(int flow) {
        return subscriptions[flow];
    }

    /** The receiving agent (for tests). */
    ReceivePoller poller() {
        return poller;
    }

    /** The driver and client this receiver uses; for tests that read the driver's counters. */
    AeronDriver driver() {
        return driver;
    }

    @Override
    public Map<String, Long> environment() {
        return Map.of(AeronEnvironment.TERM_LENGTH.key, (long) driver.options().termLengthBytes(),
            AeronEnvironment.RELIABLE.key, driver.options().reliable() ? 1L : 0L,
            AeronEnvironment.HEADER_LENGTH.key, (long) MessageHeader.LENGTH);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            ReceivePoller.close(runner, Closing.deadline()); // bounded: a stuck thread must not hang the run's end
        } finally {
            CloseHelper.quietCloseAll(subscriptions);
            if (replyPublications != null) {
                CloseHelper.quietCloseAll(replyPublications);
            }
            if (driver.datagrams() != null) {
                for (int port : ports) {
                    driver.datagrams().forget(port);
                }
            }
            release.accept(driver);
        }
    }
}
