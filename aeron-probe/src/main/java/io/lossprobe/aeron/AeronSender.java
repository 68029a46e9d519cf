package io.lossprobe.aeron;

import static io.lossprobe.aeron.AeronProbeCounter.ADMIN_ACTIONS;
import static io.lossprobe.aeron.AeronProbeCounter.BACK_PRESSURE_EPISODES;
import static io.lossprobe.aeron.AeronProbeCounter.DATAGRAMS_SENT;
import static io.lossprobe.aeron.AeronProbeCounter.MESSAGES_ACCEPTED;
import static io.lossprobe.aeron.AeronProbeCounter.REFUSED_NOT_CONNECTED_OR_CLOSED;
import static io.lossprobe.aeron.AeronProbeCounter.REPLY_LOSS_REPORT_BYTES;
import static io.lossprobe.aeron.AeronProbeCounter.REPLY_NAKS_SENT;
import static io.lossprobe.aeron.AeronProbeCounter.SND_BPE;
import static io.lossprobe.aeron.AeronProbeCounter.SND_NAKS_RECEIVED;

import io.aeron.AeronCounters;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.lossprobe.core.transport.Closing;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.TransportReport;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.agrona.CloseHelper;
import org.agrona.concurrent.AgentRunner;

/**
 * One exclusive publication per flow towards {@code host:basePort+i}, written by the send loop on one sending
 * thread. The driver's sender agent turns the committed frames into datagrams of up to an MTU.
 *
 * <p>Echo mode: one subscription per flow for its replies on {@code local:basePort+ports+i}, stream
 * {@link AeronOptions#replyStreamId}, where {@code local} is this host's address on the route to the target; a
 * {@link ReceivePoller} thread of its own ({@value ReceivePoller#REPLY_ROLE_NAME}) feeds them to the spec's
 * reply accounting, and {@link #onReplyThread} runs commands on it.
 *
 * <p>Behind a NAT ({@link SenderSpec#behindNat}): each flow's publication is instead a dynamic multi-destination-cast
 * one on a control port of its own ({@link AeronOptions#natPublicationChannel}), which the receiver reaches with its
 * status messages ({@code AeronReceiver.punch}); the data goes where they came from. Its control frames are taken
 * from the target's address only ({@link DatagramCounts#guardControl}), so the embedded driver is required.
 */
final class AeronSender implements SenderEndpoint {
    static final String THREAD_NAME = "lossprobe-aeron-tx";

    private final AeronDriver driver;
    private final Consumer<AeronDriver> release;
    private final ExclusivePublication[] publications;
    /** Echo mode: the reply subscriptions and their poller; null in stream mode. */
    private final Subscription[] replySubscriptions;
    private final ReceivePoller replyPoller;
    private final AgentRunner replyRunner;
    private final AeronWriter[] writers;
    /** The sending thread: the engine's send driver runs the send loop here, one cycle per task. */
    private final ScheduledExecutorService thread;
    private final DriverCounters counters;
    private final Map<String, Long> environment;
    private long[] nakAtStart;
    private long[] bpeAtStart;
    private long[] episodesAtStart;
    private long[] adminAtStart;
    private long[] notConnectedAtStart;
    private long acceptedAtStart;
    private long datagramsAtStart;
    private long[] replyNaksAtStart;
    private long[] replyLossBytesAtStart;
    private boolean closed;
    /** Echo mode: each flow's reply session; null in stream mode. */
    private final int[] replySessions;
    /** Behind a NAT: each flow's control port, guard and MDC destinations counter; null otherwise. */
    private final Nat nat;
    private long[] controlRefusedAtStart;
    /** Multicast: the flows' publications' status watch and fc-receivers counter (-1: none); null otherwise. */
    private final MulticastWatch multicast;

    /**
     * A multicast sender's per-flow view of its receivers; with multi-destination-cast, also each publication's
     * control guard (only the receivers' addresses may join it) and its refusals at the step's start.
     */
    record MulticastWatch(Multicast settings, DatagramCounts.StatusWatch[] watches, int[] fcReceivers,
                          java.util.List<Map<java.net.InetAddress, long[]>> atStart,
                          DatagramCounts.ControlGuard[] guards, long[] refusedAtStart) {
    }

    /**
     * A sender behind a NAT's per-flow state: where each flow's status messages must arrive, the guard that drops
     * control frames from elsewhere, and the driver's counter of the publication's destinations.
     */
    record Nat(int[] controlPorts, DatagramCounts.ControlGuard[] guards, int[] destinationCounters, String target) {
    }

    private AeronSender(AeronDriver driver, Consumer<AeronDriver> release, ExclusivePublication[] publications,
                        AeronWriter[] writers, Subscription[] replySubscriptions, int[] replySessions,
                        ReceivePoller replyPoller, AgentRunner replyRunner, Nat nat, MulticastWatch multicast) {
        this.multicast = multicast;
        this.replySessions = replySessions;
        this.nat = nat;
        this.driver = driver;
        this.release = release;
        this.publications = publications;
        this.writers = writers;
        this.replySubscriptions = replySubscriptions;
        this.replyPoller = replyPoller;
        this.replyRunner = replyRunner;
        this.counters = new DriverCounters(driver, DriverCounters.SENDER);
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, THREAD_NAME);
            t.setDaemon(true);
            return t;
        });
        Map<String, Long> env = new HashMap<>();
        env.put(AeronEnvironment.TERM_LENGTH.key, (long) publications[0].termBufferLength());
        env.put(AeronEnvironment.MTU.key, (long) driver.options().mtuBytes());
        env.put(AeronEnvironment.MAX_PAYLOAD_LENGTH.key, (long) publications[0].maxPayloadLength());
        env.put(AeronEnvironment.EMBEDDED_DRIVER.key, driver.embedded() ? 1L : 0L);
        this.environment = env;
    }

    static AeronSender open(SenderSpec spec, AeronDriver driver, Consumer<AeronDriver> release) throws Exception {
        int flows = spec.plan().ports();
        boolean echo = spec.plan().echo();
        if (echo) {
            if (spec.replies() == null || spec.replies().length != flows) {
                throw new IllegalArgumentException("echo mode needs the accounting of " + flows + " flows' replies");
            }
            AeronOptions.checkReplyPorts(spec.plan());
        }
        boolean behindNat = spec.behindNat();
        if (behindNat) {
            refuseBehindNat(echo, driver);
        }
        Nat nat = behindNat ? new Nat(new int[flows], new DatagramCounts.ControlGuard[flows], new int[flows],
            spec.targetHost()) : null;
        ExclusivePublication[] publications = new ExclusivePublication[flows];
        Subscription[] replySubscriptions = echo ? new Subscription[flows] : null;
        int[] replySessions = echo ? new int[flows] : null;
        AgentRunner replyRunner = null;
        Multicast group = driver.options().multicast();
        if (group != null && group.mdc()) {
            refuseMdc(group, driver);
        }
        MulticastWatch watch = group == null || driver.datagrams() == null ? null : new MulticastWatch(group,
            new DatagramCounts.StatusWatch[flows], new int[flows], new java.util.ArrayList<>(),
            group.mdc() ? new DatagramCounts.ControlGuard[flows] : null, new long[flows]);
        try {
            if (group != null && (echo || behindNat)) {
                throw new IllegalArgumentException("aeron multicast senders send no echo requests and are never "
                    + "behind a NAT");
            }
            if (echo) {
                // Subscribed before the requests' publications connect, so the responder's reply publications
                // (opened with its receiver) can connect while ours do.
                String local = localAddressTowards(spec.targetHost());
                for (int i = 0; i < flows; i++) {
                    int session = AeronSessions.reply(spec.auth(), i);
                    replySessions[i] = session;
                    if (driver.datagrams() != null) {
                        driver.datagrams().expectSession(AeronOptions.replyPort(spec.plan(), i), session);
                    }
                    replySubscriptions[i] = driver.aeron().addSubscription(
                        driver.options().subscriptionChannel(local, AeronOptions.replyPort(spec.plan(), i), session),
                        AeronOptions.replyStreamId(i));
                }
            }
            AeronWriter[] writers = new AeronWriter[flows];
            // Behind a NAT the control sockets take the status messages at the address the controller reached this
            // server at (where its receivers send them), when the spec names it.
            String local = !behindNat ? null : spec.sourceHost() != null ? spec.sourceHost()
                : localAddressTowards(spec.targetHost());
            java.net.InetAddress target = behindNat ? java.net.InetAddress.getByName(spec.targetHost()) : null;
            for (int i = 0; i < flows; i++) {
                int session = AeronSessions.request(spec.auth(), i);
                if (behindNat) {
                    nat.guards()[i] = driver.datagrams().guardControl(session, target);
                    publications[i] = driver.aeron().addExclusivePublication(
                        driver.options().natPublicationChannel(local, session), AeronOptions.streamId(i));
                    requireInstalled(nat.guards()[i], i);
                    nat.controlPorts()[i] = controlPort(publications[i]);
                    nat.destinationCounters()[i] = destinationsCounter(driver, publications[i]);
                } else {
                    if (watch != null) {
                        watch.watches()[i] = driver.datagrams().watchStatus(session,
                            driver.options().termLengthBytes());
                        if (watch.guards() != null) {
                            watch.guards()[i] = driver.datagrams().guardControl(session, group.mdcReceivers());
                        }
                    }
                    publications[i] = driver.aeron().addExclusivePublication(
                        driver.options().publicationChannel(spec.targetHost(), spec.plan().port(i), session,
                            spec.sourceHost()),
                        AeronOptions.streamId(i));
                    if (watch != null && watch.guards() != null) {
                        requireInstalled(watch.guards()[i], i);
                    }
                    if (watch != null) {
                        watch.fcReceivers()[i] = counterOf(driver, publications[i],
                            AeronCounters.FLOW_CONTROL_RECEIVERS_COUNTER_TYPE_ID);
                    }
                }
                writers[i] = new AeronWriter(publications[i], spec.plan().messageSize());
            }
            if (!behindNat) {
                // Behind a NAT the receivers reach the publications after this opens: awaitPunches waits.
                awaitConnected(publications, spec, driver.options().connectTimeoutMs());
            }
            ReceivePoller replyPoller = null;
            if (echo) {
                awaitReplyStreams(replySubscriptions, spec, driver.options().connectTimeoutMs());
                replyPoller = new ReceivePoller(ReceivePoller.REPLY_ROLE_NAME, replySubscriptions, spec.replies(),
                    null);
                replyRunner = new AgentRunner(AeronDriver.networkIdle(), replyPoller::onError, null, replyPoller);
                ReceivePoller.start(replyRunner);
            }
            return new AeronSender(driver, release, publications, writers, replySubscriptions, replySessions,
                replyPoller, replyRunner, nat, watch);
        } catch (Exception | Error e) {
            CloseHelper.quietCloseAll(replyRunner);
            CloseHelper.quietCloseAll(publications);
            forgetGuards(nat == null ? null : nat.guards(), driver);
            forgetWatches(watch, driver);
            if (replySubscriptions != null) {
                CloseHelper.quietCloseAll(replySubscriptions);
            }
            throw e;
        }
    }

    /**
     * Behind a NAT: no echo requests (a server sends none), and only the embedded driver, whose send endpoints are
     * lossprobe's: a dynamic MDC publication adds a destination for every status message its control port takes,
     * and only lossprobe's endpoint restricts those to the target's address. Refused before any traffic.
     */
    private static void refuseBehindNat(boolean echo, AeronDriver driver) {
        if (echo) {
            throw new IllegalArgumentException("aeron senders behind a NAT send no echo requests");
        }
        if (driver.datagrams() == null) {
            throw new IllegalArgumentException("aeron senders cannot reach receivers behind a NAT through an "
                + "external media driver (aeron.dir): only lossprobe's embedded driver restricts who may join their "
                + "publications (docs/aeron.md, \"Behind a NAT\")");
        }
    }

    /**
     * Multi-destination-cast: only the embedded driver (whose send endpoints are lossprobe's, so the publications
     * take control frames from the receivers' addresses only: Aeron adds a destination for every status message),
     * and the receivers named. Refused before any traffic.
     */
    private static void refuseMdc(Multicast group, AeronDriver driver) {
        if (driver.datagrams() == null) {
            throw new IllegalArgumentException("aeron multi-destination-cast cannot go through an external media "
                + "driver (aeron.dir): only lossprobe's embedded driver restricts who may join its publications");
        }
        if (group.mdcReceivers().isEmpty()) {
            throw new IllegalArgumentException("aeron multi-destination-cast needs its receivers' addresses "
                + "(aeron.mdcReceivers, set by run --mdc): no one else may join its publications");
        }
    }

    /** A dynamic MDC publication's guard must be on lossprobe's send endpoint, or anyone could join it. */
    private static void requireInstalled(DatagramCounts.ControlGuard guard, int flow) {
        if (!guard.installed()) {
            throw new IllegalStateException("the Aeron driver's send endpoint for flow " + flow
                + " is not lossprobe's: nothing would restrict who joins its publication");
        }
    }

    /** Forgets the control guards of NAT or MDC publications ({@code guards} null or with nulls: those not made). */
    private static void forgetGuards(DatagramCounts.ControlGuard[] guards, AeronDriver driver) {
        if (guards == null) {
            return;
        }
        for (DatagramCounts.ControlGuard guard : guards) {
            if (guard != null) {
                driver.datagrams().forgetControl(guard);
            }
        }
    }

    private static void forgetWatches(MulticastWatch watch, AeronDriver driver) {
        if (watch == null) {
            return;
        }
        forgetGuards(watch.guards(), driver);
        for (DatagramCounts.StatusWatch w : watch.watches()) {
            if (w != null) {
                driver.datagrams().forgetStatus(w);
            }
        }
    }

    /** The id of the driver's counter of {@code type} that belongs to {@code publication}, or -1 when it has none. */
    private static int counterOf(AeronDriver driver, ExclusivePublication publication, int type) {
        org.agrona.concurrent.status.CountersReader counters = driver.aeron().countersReader();
        int[] found = {-1};
        counters.forEach((id, t, key, label) -> {
            if (t == type && counters.getCounterRegistrationId(id) == publication.registrationId()) {
                found[0] = id;
            }
        });
        return found[0];
    }

    /** The ephemeral port the publication's control socket was bound to, from the driver's own counter. */
    private static int controlPort(ExclusivePublication publication) {
        List<String> addresses = publication.localSocketAddresses();
        for (String a : addresses) {
            int port = Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
            if (port > 0) {
                return port;
            }
        }
        throw new IllegalStateException("the Aeron driver gave no control port for " + publication.channel() + ": "
            + addresses);
    }

    /** The id of the driver's counter of the MDC publication's destinations ({@code mdc-num-dest}). */
    private static int destinationsCounter(AeronDriver driver, ExclusivePublication publication) {
        int found = counterOf(driver, publication, AeronCounters.MDC_DESTINATIONS_COUNTER_TYPE_ID);
        if (found < 0) {
            throw new IllegalStateException("the Aeron driver has no destinations counter for "
                + publication.channel());
        }
        return found;
    }

    /** Behind a NAT: the flows whose publication no status message has reached (not connected). */
    private int[] unreached() {
        int n = 0;
        int[] out = new int[publications.length];
        for (int i = 0; i < publications.length; i++) {
            if (!publications[i].isConnected()) {
                out[n++] = i;
            }
        }
        return java.util.Arrays.copyOf(out, n);
    }

    private long destinations(int flow) {
        return driver.aeron().countersReader().getCounterValue(nat.destinationCounters()[flow]);
    }

    /** Behind a NAT: each flow's control port, where its receiver's status messages must arrive; else none. */
    @Override
    public int[] sourcePorts() {
        return nat == null ? new int[0] : nat.controlPorts().clone();
    }

    /**
     * Behind a NAT: waits up to {@code timeoutNs} for every flow's publication to connect (a status message of its
     * receiver reached its control port), polling with Aeron's back-off idle strategy on the caller's (the
     * engine's) thread; returns the flows still not connected.
     */
    @Override
    public int[] awaitPunches(long timeoutNs) {
        if (nat == null) {
            throw new UnsupportedOperationException("these senders take no punches");
        }
        long deadline = System.nanoTime() + timeoutNs;
        org.agrona.concurrent.IdleStrategy idle = AeronDriver.networkIdle();
        while (true) {
            int[] missing = unreached();
            if (missing.length == 0 || System.nanoTime() - deadline >= 0) {
                return missing;
            }
            idle.idle();
        }
    }

    /**
     * Behind a NAT, before a step's first message: every flow's publication connected, to one destination. More
     * than one means someone at the controller's address besides the flow's receiver sent status messages to its
     * control port (lossprobe's receiver subscribes once per pass): its data would go there too.
     */
    private void checkReached() {
        for (int i = 0; i < publications.length; i++) {
            String flow = "flow " + i + " (control port " + nat.controlPorts()[i] + ")";
            if (!publications[i].isConnected()) {
                throw new IllegalStateException(flow + ": no status message of its receiver at " + nat.target()
                    + " reached the publication (not connected): nothing to send the step to");
            }
            long destinations = destinations(i);
            if (destinations != 1) {
                throw new IllegalStateException(flow + ": the publication has " + destinations + " destinations, not"
                    + " its receiver's alone: something else at " + nat.target() + " sent it status messages;"
                    + " refusing to send the step's data there");
            }
        }
    }

    /**
     * This host's address on the route to {@code target} (what the responder sees as the requester's address),
     * found by connecting a UDP socket, which sends nothing; the wildcard address when there is no such route.
     */
    static String localAddressTowards(String target) {
        try {
            java.net.InetAddress targetAddress = java.net.InetAddress.getByName(target);
            java.net.InetAddress local = io.lossprobe.core.plan.Addresses.localTowards(targetAddress, 9);
            if (local != null && !local.isAnyLocalAddress()) {
                return local.getHostAddress();
            }
            return targetAddress instanceof java.net.Inet6Address ? "::" : "0.0.0.0";
        } catch (IOException | RuntimeException e) {
            return target.indexOf(':') >= 0 ? "::" : "0.0.0.0";
        }
    }

    /**
     * Echo mode: each reply subscription has an image once the responder's reply publication reached it, so a
     * requester the responder cannot reach fails here instead of losing every reply.
     */
    private static void awaitReplyStreams(Subscription[] subscriptions, SenderSpec spec, long timeoutMs)
        throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (int i = 0; i < subscriptions.length; i++) {
            while (!subscriptions[i].isConnected()) {
                if (System.nanoTime() >= deadline) {
                    throw new IOException("no Aeron echo replies stream reached port "
                        + AeronOptions.replyPort(spec.plan(), i) + " (" + subscriptions[i].channel() + ") within "
                        + timeoutMs + " ms: the responder at " + spec.targetHost()
                        + " must reach this host on ports basePort + ports + flow");
                }
                LockSupport.parkNanos(1_000_000);
            }
        }
    }

    /** Runs {@code action} on the reply poller's thread between replies and waits for it. */
    @Override
    public void onReplyThread(Runnable action) throws Exception {
        if (replyPoller == null) {
            throw new UnsupportedOperationException("not an echo-mode sender");
        }
        replyPoller.runOnAgent(action);
    }

    /** A publication is connected once its subscriber's driver answered the setup with a status message. */
    private static void awaitConnected(ExclusivePublication[] publications, SenderSpec spec, long timeoutMs)
        throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (int i = 0; i < publications.length; i++) {
            while (!publications[i].isConnected()) {
                if (System.nanoTime() >= deadline) {
                    throw new IOException("no Aeron subscriber answered on " + io.lossprobe.core.plan.Addresses
                        .hostPort(spec.targetHost(), spec.plan().port(i)) + " within " + timeoutMs
                        + " ms (is the receiver running?)");
                }
                LockSupport.parkNanos(1_000_000);
            }
        }
    }

    /** Flow {@code flow}'s publication (for tests). */
    ExclusivePublication publication(int flow) {
        return publications[flow];
    }

    /** Behind a NAT: control frames flow {@code flow}'s guard dropped so far (for tests). */
    long controlRefused(int flow) {
        return nat.guards()[flow].refused();
    }

    /** Behind a NAT: the destinations of flow {@code flow}'s publication, by the driver's counter (for tests). */
    long destinationCount(int flow) {
        return destinations(flow);
    }

    @Override
    public MessageWriter writer(int flow) {
        return writers[flow];
    }

    /**
     * A thread of its own: Aeron's driver sends the committed frames, so the writers only claim and commit. While
     * every flow is back-pressured the driver backs off by the pacing's blocked back-off.
     */
    @Override
    public ScheduledExecutorService sendExecutor() {
        return thread;
    }

    /**
     * Every counter starts here, before the step's first message: messages against datagrams, and the repair
     * counters, which at the window would be read while a warm-up's NAKs are in motion (see the receiver's).
     */
    @Override
    public void beginStep(int step) {
        if (multicast != null) {
            // Before every mark: the step's counters start once the cap is past.
            awaitSetupCap();
            stepStartNs = System.nanoTime();
        }
        if (nat != null) {
            checkReached();
            controlRefusedAtStart = new long[writers.length];
            for (int i = 0; i < writers.length; i++) {
                controlRefusedAtStart[i] = nat.guards()[i].refused();
            }
        }
        markCounters();
        episodesAtStart = new long[writers.length];
        adminAtStart = new long[writers.length];
        notConnectedAtStart = new long[writers.length];
        for (int i = 0; i < writers.length; i++) {
            episodesAtStart[i] = writers[i].backPressureEpisodes();
            adminAtStart[i] = writers[i].adminActions();
            notConnectedAtStart[i] = writers[i].notConnected() + writers[i].closedOrMaxPosition();
        }
        acceptedAtStart = accepted();
        if (multicast != null) {
            multicast.atStart().clear();
            for (DatagramCounts.StatusWatch w : multicast.watches()) {
                w.newEpoch();
                multicast.atStart().add(bySource(w));
            }
            for (int i = 0; multicast.guards() != null && i < writers.length; i++) {
                multicast.refusedAtStart()[i] = multicast.guards()[i].refused();
            }
        }
        datagramsAtStart = driver.datagrams() == null ? 0 : driver.datagrams().sent();
        if (replyPoller != null) {
            replyPoller.errors().beginStep();
        }
    }

    /**
     * The driver's counters and the streams' repair counters, read on the engine's thread (shared-memory counters;
     * nothing touches the sending thread).
     */
    private void markCounters() {
        counters.mark();
        nakAtStart = driver.perFlow(AeronCounters.DRIVER_SENDER_NAKS_RECEIVED_TYPE_ID, writers.length, this::ours);
        bpeAtStart = driver.perFlow(AeronCounters.DRIVER_SENDER_BPE_TYPE_ID, writers.length, this::ours);
        if (replySubscriptions != null) {
            // Over the same span as the driver's own NAK total and the requests' (the responder answers the
            // warm-up too): a reply baseline taken at another moment than the driver's once gave more reply NAKs
            // than the driver's total.
            replyNaksAtStart = replyNaks();
            replyLossBytesAtStart = replyLossBytes();
        }
    }

    /** Echo mode: NAKs this driver sent for each flow's reply stream (reliable mode repairs reply loss so). */
    private long[] replyNaks() {
        return driver.perFlow(AeronCounters.DRIVER_RECEIVER_NAKS_SENT_TYPE_ID, AeronOptions.REPLY_STREAM_ID_BASE,
            replySubscriptions.length, this::oursReply);
    }

    /** Echo mode: the loss report's missing bytes on each flow's reply stream. */
    private long[] replyLossBytes() {
        return driver.lossReport(AeronOptions.REPLY_STREAM_ID_BASE, replySubscriptions.length, this::oursReply)
            .bytesLost();
    }

    /** The responder's reply session of the flow ({@link AeronSessions}), not any image a spoofer added. */
    private boolean oursReply(int flow, int sessionId) {
        return sessionId == replySessions[flow];
    }

    private static long sumOf(long[] values) {
        long sum = 0;
        for (long v : values) {
            sum += v;
        }
        return sum;
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

    /** After the repairs settled: the NAKs of the window's last losses may still be on their way. */
    @Override
    public TransportReport endStep() {
        AeronDriver.awaitSettled(() -> counters.repairSum() + sumOf(driver.perFlow(
                AeronCounters.DRIVER_SENDER_NAKS_RECEIVED_TYPE_ID, writers.length, this::ours)),
            AeronDriver.SETTLE_QUIET_NS, AeronDriver.SETTLE_TIMEOUT_NS);
        Map<String, Long> totals = new HashMap<>(counters.deltas());
        long[] naks = driver.perFlow(AeronCounters.DRIVER_SENDER_NAKS_RECEIVED_TYPE_ID, writers.length, this::ours);
        long[] bpe = driver.perFlow(AeronCounters.DRIVER_SENDER_BPE_TYPE_ID, writers.length, this::ours);
        Map<Integer, Map<String, Long>> flows = new HashMap<>();
        long episodes = 0;
        long admin = 0;
        long refused = 0;
        for (int i = 0; i < writers.length; i++) {
            Map<String, Long> f = new HashMap<>();
            f.put(SND_NAKS_RECEIVED.key, naks[i] - nakAtStart[i]);
            f.put(SND_BPE.key, bpe[i] - bpeAtStart[i]);
            long e = writers[i].backPressureEpisodes() - episodesAtStart[i];
            long a = writers[i].adminActions() - adminAtStart[i];
            long r = writers[i].notConnected() + writers[i].closedOrMaxPosition() - notConnectedAtStart[i];
            f.put(BACK_PRESSURE_EPISODES.key, e);
            f.put(ADMIN_ACTIONS.key, a);
            f.put(REFUSED_NOT_CONNECTED_OR_CLOSED.key, r);
            episodes += e;
            admin += a;
            refused += r;
            flows.put(i, f);
        }
        if (replySubscriptions != null) {
            long[] replyNaks = replyNaks();
            long[] replyLoss = replyLossBytes();
            for (int i = 0; i < writers.length; i++) {
                Map<String, Long> f = flows.get(i);
                f.put(REPLY_NAKS_SENT.key, replyNaks[i] - replyNaksAtStart[i]);
                f.put(REPLY_LOSS_REPORT_BYTES.key, replyLoss[i] - replyLossBytesAtStart[i]);
                totals.merge(REPLY_NAKS_SENT.key, f.get(REPLY_NAKS_SENT.key), Long::sum);
                totals.merge(REPLY_LOSS_REPORT_BYTES.key, f.get(REPLY_LOSS_REPORT_BYTES.key), Long::sum);
            }
        }
        totals.put(BACK_PRESSURE_EPISODES.key, episodes);
        totals.put(ADMIN_ACTIONS.key, admin);
        totals.put(REFUSED_NOT_CONNECTED_OR_CLOSED.key, refused);
        // Messages over the step's whole span (warm-up, window, drain), to set against the datagram count.
        totals.put(MESSAGES_ACCEPTED.key, accepted() - acceptedAtStart);
        if (driver.datagrams() != null && driver.datagrams().countingSends()) {
            totals.put(DATAGRAMS_SENT.key, driver.datagrams().sent() - datagramsAtStart);
        }
        List<String> notes = new java.util.ArrayList<>(replyPoller == null ? List.of() : replyPoller.errors().notes());
        if (nat != null) {
            natNotes(notes);
        }
        if (multicast != null) {
            multicastReport(totals, notes, episodes);
        }
        return new TransportReport(totals, flows, notes);
    }

    /** Multicast: when the step began, after any SETUP cap was waited out. */
    private long stepStartNs;

    /** How long a SETUP caps a min or tagged sender: Aeron's flow-control receiver timeout. */
    static final long SETUP_CAP_NS = io.aeron.driver.Configuration.flowControlReceiverTimeoutNs();

    /**
     * Min and tagged flow control hold the sender at its limit for {@link #SETUP_CAP_NS} after each SETUP it sends
     * once a receiver is known ({@link DatagramCounts.StatusWatch#onSetupSent}): the last receivers to join (or one
     * asking again for a SETUP it no longer needed) so stall a sender whose receivers all keep up, for 5 s, and a
     * step there would measure that cap, not the receivers. Seen in the lab with multi-destination-cast: the
     * sender stopped after one term (64 KiB a flow) in 4 runs of 6. Waits here, before the step's first message,
     * until the last such SETUP is that long past, at most twice over; a cap within a step is said in its notes.
     */
    private void awaitSetupCap() {
        if (multicast.settings().flowControl().equals("max")) {
            return;
        }
        long giveUp = System.nanoTime() + 2 * SETUP_CAP_NS;
        org.agrona.concurrent.IdleStrategy idle = new org.agrona.concurrent.SleepingMillisIdleStrategy(1);
        while (System.nanoTime() - giveUp < 0) {
            long last = lastSetupAfterStatusNs();
            if (last == 0 || System.nanoTime() - (last + SETUP_CAP_NS) >= 0) {
                return;
            }
            idle.idle();
        }
    }

    /** The last SETUP any flow's publication sent after a status message ({@link System#nanoTime}; 0: none). */
    private long lastSetupAfterStatusNs() {
        long last = 0;
        for (DatagramCounts.StatusWatch w : multicast.watches()) {
            last = Math.max(last, w.setupAfterStatusNs());
        }
        return last;
    }

    /** A watch's sources now: address to {status messages, times lowest, most bytes behind, window}. */
    private static Map<java.net.InetAddress, long[]> bySource(DatagramCounts.StatusWatch watch) {
        List<java.net.InetAddress> addresses = new java.util.ArrayList<>();
        List<long[]> values = watch.snapshot(addresses);
        Map<java.net.InetAddress, long[]> out = new java.util.LinkedHashMap<>();
        for (int i = 0; i < addresses.size(); i++) {
            out.put(addresses.get(i), values.get(i));
        }
        return out;
    }

    /**
     * Multicast: the receivers the publications' flow control counted and those that sent status messages in the
     * step, and who held the sender back ({@link MulticastWatch}, docs/multicast.md): the receiver whose status
     * messages were most often the lowest position, when the sender was held (back-pressured or at its flow-control
     * limit) under {@code min} or {@code tagged}, or, under {@code max}, the one that fell behind the fastest by more
     * than its window.
     */
    private void multicastReport(Map<String, Long> totals, List<String> notes, long episodes) {
        long fcReceivers = Long.MAX_VALUE;
        long sources = 0;
        Map<java.net.InetAddress, long[]> step = new java.util.LinkedHashMap<>();
        for (int i = 0; i < publications.length; i++) {
            if (multicast.fcReceivers()[i] >= 0) {
                fcReceivers = Math.min(fcReceivers,
                    driver.aeron().countersReader().getCounterValue(multicast.fcReceivers()[i]));
            }
            Map<java.net.InetAddress, long[]> before = multicast.atStart().get(i);
            long heard = 0;
            for (Map.Entry<java.net.InetAddress, long[]> e : bySource(multicast.watches()[i]).entrySet()) {
                long[] then = before.getOrDefault(e.getKey(), new long[4]);
                long[] now = e.getValue();
                long[] sum = step.computeIfAbsent(e.getKey(), a -> new long[4]);
                sum[0] += now[0] - then[0];
                sum[1] += now[1] - then[1];
                sum[2] = Math.max(sum[2], now[2]);
                sum[3] = Math.max(sum[3], now[3]);
                heard += now[0] > then[0] ? 1 : 0;
            }
            sources = Math.max(sources, heard);
        }
        if (fcReceivers != Long.MAX_VALUE) {
            totals.put(AeronProbeCounter.FC_RECEIVERS.key, fcReceivers);
        }
        for (int i = 0; multicast.guards() != null && i < publications.length; i++) {
            long refused = multicast.guards()[i].refused() - multicast.refusedAtStart()[i];
            if (refused > 0) {
                notes.add("flow " + i + ": " + refused + " Aeron control frame(s) from another address than the "
                    + "receivers dropped (status messages or NAKs: someone else tried to join or steer its "
                    + "multi-destination-cast publication)");
            }
        }
        totals.put(AeronProbeCounter.STATUS_SOURCES.key, sources);
        long disagreed = step.values().stream().mapToLong(v -> v[1]).sum();
        String fc = multicast.settings().flowControl();
        long lastSetup = lastSetupAfterStatusNs();
        if (!fc.equals("max") && lastSetup - stepStartNs > 0) {
            notes.add(String.format(java.util.Locale.ROOT, "flow control %s: the sender sent a SETUP %.0f ms into "
                + "the step while it had receivers, after which Aeron holds it at its limit of that moment for %d s "
                + "(its flow-control receiver timeout): a slow step may be that cap, not a receiver", fc,
                (lastSetup - stepStartNs) / 1e6, TimeUnit.NANOSECONDS.toSeconds(SETUP_CAP_NS)));
        }
        if (!fc.equals("max")) {
            long limits = totals.getOrDefault("aeron.senderFlowControlLimits", 0L);
            step.entrySet().stream().max(java.util.Comparator.comparingLong(e -> e.getValue()[1]))
                .filter(e -> e.getValue()[1] > 0 && (episodes > 0 || limits > 0))
                .ifPresent(e -> notes.add(String.format(java.util.Locale.ROOT, "flow control %s: %s held the sender "
                    + "back: %s; the sender was back-pressured %,d times (aeron.backPressureEpisodes) and met its "
                    + "flow-control limit %,d times (aeron.senderFlowControlLimits)", fc,
                    e.getKey().getHostAddress(), figures(e.getValue(), disagreed), episodes, limits)));
            return;
        }
        for (Map.Entry<java.net.InetAddress, long[]> e : step.entrySet()) {
            if (e.getValue()[2] > e.getValue()[3]) {
                notes.add("flow control max: " + e.getKey().getHostAddress() + " fell behind: "
                    + figures(e.getValue(), disagreed) + ", more than its window: the sender does not wait for it, "
                    + "and what it misses past the retransmit window it loses");
            }
        }
    }

    /** One receiver's figures of {@link #multicastReport}: {status messages, times lowest, most behind, window}. */
    private static String figures(long[] v, long disagreed) {
        return String.format(java.util.Locale.ROOT, "the lowest position in %,d of the %,d status messages taken "
            + "while the receivers disagreed, at most %,d bytes behind the receiver furthest ahead (its window %,d "
            + "bytes)", v[1], disagreed, v[2], v[3]);
    }

    /** Behind a NAT: control frames dropped in the step, and destinations other than the receiver's, per flow. */
    private void natNotes(List<String> notes) {
        for (int i = 0; i < writers.length; i++) {
            long refused = nat.guards()[i].refused() - controlRefusedAtStart[i];
            if (refused > 0) {
                notes.add("flow " + i + " (control port " + nat.controlPorts()[i] + "): " + refused + " Aeron control"
                    + " frame(s) from another address than " + nat.target() + " dropped (status messages or NAKs:"
                    + " someone else tried to join or steer its publication)");
            }
            long destinations = destinations(i);
            if (destinations > 1) {
                notes.add("flow " + i + " (control port " + nat.controlPorts()[i] + "): " + destinations
                    + " destinations at the step's end: something else at " + nat.target() + " joined its"
                    + " publication and got a copy of its data");
            }
        }
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
        // Bounded, and never thrown past the caller: a send thread stuck in a cycle must neither hang the run's
        // end nor fail a run whose steps are all measured. It is a daemon, left to the process's exit.
        long deadline = Closing.deadline();
        thread.shutdownNow();
        try {
            thread.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ReceivePoller.close(replyRunner, deadline);
        CloseHelper.quietCloseAll(publications);
        forgetGuards(nat == null ? null : nat.guards(), driver);
        forgetWatches(multicast, driver);
        if (replySubscriptions != null) {
            CloseHelper.quietCloseAll(replySubscriptions);
        }
        release.accept(driver);
    }
}
