package io.lossprobe.aeron;

import io.aeron.driver.DataPacketDispatcher;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.media.ReceiveChannelEndpoint;
import io.aeron.driver.media.SendChannelEndpoint;
import io.aeron.driver.media.UdpChannel;
import io.aeron.protocol.DataHeaderFlyweight;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Counts the UDP datagrams the embedded driver sends and the data datagrams it receives, by wrapping its channel
 * endpoints. Aeron packs many messages (frames) into one datagram of up to an MTU, so datagrams/s and
 * messages/s differ; the driver's own counters give bytes only.
 *
 * <p>Sent datagrams are every {@code send} of a publication: data, heartbeats, retransmits and setup frames.
 * Received datagrams are those carrying data or heartbeat frames, counted before any test loss generator.
 * Each counter has one writer (the driver's sender or receiver agent), so a lazy set is enough.
 *
 * <p>The receive endpoints also filter by source: where a receiver registered the only address its data may come
 * from ({@link #allowOnly}, between hosts the controller's), every frame from elsewhere (data, SETUP, RTT) is dropped
 * before the driver sees it and counted as refused. So a spoofed SETUP can no longer make the driver send status
 * messages to the address it names, nor create images.
 *
 * <p>A spoofer that uses the allowed address passes that filter, so each receive port also knows the one Aeron
 * session its flow's sender publishes with ({@link #expectSession}, derived from the pass's key:
 * {@link AeronSessions}): a SETUP, data or RTT frame of any other session is dropped before the driver sees it, so
 * it makes no image, earns no status message or NAK, and adds nothing to the flow's NAK and loss-report counters;
 * it is counted as a foreign-session frame ({@link #foreignSession}), a SETUP among them also as a refused image
 * ({@link #foreignSetups}).
 */
final class DatagramCounts {
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong received = new AtomicLong();
    /** Local port to the only source address it accepts; a port absent accepts any. */
    private final java.util.concurrent.ConcurrentHashMap<Integer, java.net.InetAddress> allowed =
        new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.concurrent.ConcurrentHashMap<Integer, AtomicLong> refused =
        new java.util.concurrent.ConcurrentHashMap<>();

    /** Local port to the only Aeron session it takes; a port absent takes any. */
    private final java.util.concurrent.ConcurrentHashMap<Integer, Integer> sessions =
        new java.util.concurrent.ConcurrentHashMap<>();
    /** Per port: frames of another session, and the SETUPs among them. */
    private final java.util.concurrent.ConcurrentHashMap<Integer, AtomicLong> foreignSession =
        new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.concurrent.ConcurrentHashMap<Integer, AtomicLong> foreignSetups =
        new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Behind a NAT: per publication session, the only address whose control frames (status messages, NAKs, RTT,
     * error and response-setup frames) its dynamic multi-destination-cast send endpoint takes. Such an endpoint's
     * socket is not connected, and Aeron adds a destination for every status message it takes, sending the data to
     * the address and port it came from; everything from another address is dropped before the driver sees it.
     */
    private final java.util.concurrent.ConcurrentHashMap<Integer, ControlGuard> controlGuards =
        new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * The dynamic MDC publication of session {@code sessionId} takes control frames only from {@code source}; call
     * before adding the publication. The guard says whether its endpoint took it ({@link ControlGuard#installed}).
     */
    ControlGuard guardControl(int sessionId, java.net.InetAddress source) {
        return guardControl(sessionId, java.util.Set.of(source));
    }

    /**
     * Multi-destination-cast: the publication of session {@code sessionId} takes control frames only from
     * {@code sources}, the run's receivers; call before adding the publication.
     */
    ControlGuard guardControl(int sessionId, java.util.Set<java.net.InetAddress> sources) {
        ControlGuard guard = new ControlGuard(sessionId, sources);
        controlGuards.put(sessionId, guard);
        return guard;
    }

    /** Multicast: per publication session, what its receivers' status messages said ({@link StatusWatch}). */
    private final java.util.concurrent.ConcurrentHashMap<Integer, StatusWatch> statusWatches =
        new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * The multicast publication of session {@code sessionId} (terms of {@code termLength} bytes) records its
     * receivers' status messages; call before adding the publication.
     */
    StatusWatch watchStatus(int sessionId, int termLength) {
        StatusWatch watch = new StatusWatch(sessionId, termLength);
        statusWatches.put(sessionId, watch);
        return watch;
    }

    /** Forgets {@code watch} (its publication closed). */
    void forgetStatus(StatusWatch watch) {
        statusWatches.values().remove(watch);
    }

    /**
     * A multicast publication's receivers as its status messages tell them, by source address: how many each sent,
     * how many times its consumption position was the lowest of the receivers heard in the last
     * {@value #RECEIVER_TIMEOUT_MS} ms while they disagreed (with flow control {@code min} the lowest sets the
     * sender's limit: it holds the sender back; with {@code max} it is the one left behind), and in the current epoch
     * (a step) how far at most it was behind the receiver furthest ahead. Written by the driver's sender agent only;
     * read by the engine's thread. At most {@value #MAX_RECEIVERS} sources are kept.
     */
    static final class StatusWatch {
        static final int MAX_RECEIVERS = 64;
        static final long RECEIVER_TIMEOUT_MS = 5_000;
        private final int sessionId;
        private final int termLength;
        private volatile StatusSource[] sources = new StatusSource[0];
        private volatile long epoch;
        /** When the publication last sent a SETUP after a receiver's status message had arrived (0: never). */
        private volatile long setupAfterStatusNs;

        StatusWatch(int sessionId, int termLength) {
            this.sessionId = sessionId;
            this.termLength = termLength;
        }

        /** Starts a new epoch (a step): the furthest-behind figures start again from 0. Engine thread only. */
        void newEpoch() {
            epoch = epoch + 1;
        }

        /**
         * The publication sent a SETUP frame. Driver's sender agent only. Aeron's min and tagged flow control
         * (1.51, {@code AbstractMinMulticastFlowControl.onSetup}) then hold the sender at the limit it had at that
         * moment for the flow-control receiver timeout (5 s by default), so that a receiver about to join is not
         * left behind; a SETUP sent once receivers are known (one asked again for a SETUP it no longer needed) so
         * caps a sender whose receivers all keep up.
         */
        void onSetupSent() {
            if (sources.length > 0) {
                setupAfterStatusNs = System.nanoTime();
            }
        }

        /** {@link System#nanoTime} of the last SETUP sent after a status message (0: none). */
        long setupAfterStatusNs() {
            return setupAfterStatusNs;
        }

        /** One status message from {@code from}. Driver's sender agent only. */
        void onStatus(java.net.InetAddress from, int termId, int termOffset, int window) {
            long now = System.nanoTime();
            StatusSource r = null;
            StatusSource[] all = sources;
            for (StatusSource s : all) {
                if (s.address.equals(from)) {
                    r = s;
                }
            }
            if (r == null) {
                if (all.length >= MAX_RECEIVERS) {
                    return;
                }
                r = new StatusSource(from);
                all = java.util.Arrays.copyOf(all, all.length + 1);
                all[all.length - 1] = r;
                sources = all;
            }
            r.position = (long) termId * termLength + termOffset;
            r.window = window;
            r.lastNs = now;
            r.messages.lazySet(r.messages.get() + 1);
            StatusSource lowest = null;
            long highest = Long.MIN_VALUE;
            long timeoutNs = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(RECEIVER_TIMEOUT_MS);
            for (StatusSource s : all) {
                if (now - s.lastNs > timeoutNs) {
                    continue;
                }
                highest = Math.max(highest, s.position);
                if (lowest == null || s.position < lowest.position) {
                    lowest = s;
                }
            }
            if (lowest != null && highest > lowest.position) {
                long e = epoch;
                if (lowest.epoch != e) {
                    lowest.epoch = e;
                    lowest.maxBehind = 0;
                }
                lowest.lowest.lazySet(lowest.lowest.get() + 1);
                lowest.maxBehind = Math.max(lowest.maxBehind, highest - lowest.position);
            }
        }

        /** Every source so far: address, status messages, times lowest, most bytes behind in this epoch, window. */
        java.util.List<long[]> snapshot(java.util.List<java.net.InetAddress> addresses) {
            java.util.List<long[]> out = new java.util.ArrayList<>();
            long e = epoch;
            for (StatusSource s : sources) {
                addresses.add(s.address);
                out.add(new long[] {s.messages.get(), s.lowest.get(), s.epoch == e ? s.maxBehind : 0, s.window});
            }
            return out;
        }
    }

    /** One receiver of a multicast publication, as {@link StatusWatch} keeps it. */
    private static final class StatusSource {
        final java.net.InetAddress address;
        final AtomicLong messages = new AtomicLong();
        final AtomicLong lowest = new AtomicLong();
        volatile long position;
        volatile long window;
        volatile long lastNs;
        volatile long epoch = -1;
        volatile long maxBehind;

        StatusSource(java.net.InetAddress address) {
            this.address = address;
        }
    }

    /** Forgets {@code guard} (its publication closed). */
    void forgetControl(ControlGuard guard) {
        controlGuards.remove(guard.sessionId, guard);
    }

    /** One dynamic MDC publication's control filter and what it dropped. */
    static final class ControlGuard {
        private final int sessionId;
        private final java.util.Set<java.net.InetAddress> allowed;
        private final AtomicLong refused = new AtomicLong();
        private volatile boolean installed;

        ControlGuard(int sessionId, java.util.Set<java.net.InetAddress> allowed) {
            this.sessionId = sessionId;
            this.allowed = java.util.Set.copyOf(allowed);
        }

        /** Whether a send endpoint filters by this guard (false: the driver's endpoints are not lossprobe's). */
        boolean installed() {
            return installed;
        }

        /** Control frames dropped for coming from another address; written by the driver's sender agent only. */
        long refused() {
            return refused.get();
        }

        boolean refuse(InetSocketAddress src) {
            if (allowed.contains(src.getAddress())) {
                return false;
            }
            refused.lazySet(refused.get() + 1);
            return true;
        }
    }

    /** Frames to local {@code port} are taken only of session {@code sessionId}; call before subscribing. */
    void expectSession(int port, int sessionId) {
        sessions.put(port, sessionId);
    }

    /** Frames (SETUP, data, RTT) of another session than the expected one, dropped on {@code port}. */
    long foreignSession(int port) {
        AtomicLong n = foreignSession.get(port);
        return n == null ? 0 : n.get();
    }

    /** The SETUP frames among {@link #foreignSession}: each would have made an image of its own. */
    long foreignSetups(int port) {
        AtomicLong n = foreignSetups.get(port);
        return n == null ? 0 : n.get();
    }

    /** Frames to local {@code port} are taken only from {@code source}; call before subscribing on the port. */
    void allowOnly(int port, java.net.InetAddress source) {
        allowed.put(port, source);
    }

    /** Forgets the port's filter (its subscription closed). */
    void forget(int port) {
        allowed.remove(port);
        refused.remove(port);
        sessions.remove(port);
        foreignSession.remove(port);
        foreignSetups.remove(port);
    }

    /** Frames refused on {@code port} because they came from another source. */
    long refused(int port) {
        AtomicLong n = refused.get(port);
        return n == null ? 0 : n.get();
    }
    private volatile boolean countingSends;
    private volatile boolean countingReceives;

    long sent() {
        return sent.get();
    }

    long received() {
        return received.get();
    }

    /** False when a test's driver customizer replaced the send endpoints, so there is no count to report. */
    boolean countingSends() {
        return countingSends;
    }

    boolean countingReceives() {
        return countingReceives;
    }

    /**
     * A dynamic MDC channel (lossprobe's senders behind a NAT and its multi-destination-cast senders open one) gets
     * the control guard its session registered, and without one takes no control frame at all: no status message,
     * so no destination; with a status watch (multi-destination-cast) it tells the watch what passed.
     */
    SendChannelEndpoint newSendEndpoint(UdpChannel channel, AtomicCounter status, MediaDriver.Context ctx) {
        countingSends = true;
        if (channel.isDynamicControlMode()) {
            String session = channel.channelUri().get(io.aeron.CommonContext.SESSION_ID_PARAM_NAME);
            ControlGuard guard = null;
            try {
                guard = session == null ? null : controlGuards.get(Integer.parseInt(session));
            } catch (NumberFormatException e) {
                // no guard: nothing is taken
            }
            if (guard != null) {
                guard.installed = true;
            }
            return new GuardedSendEndpoint(channel, status, ctx, sent, guard, statusWatches.get(sessionOf(channel)));
        }
        if (channel.isMulticast()) {
            StatusWatch watch = statusWatches.get(sessionOf(channel));
            if (watch != null) {
                return new WatchingSendEndpoint(channel, status, ctx, sent, watch);
            }
        }
        return new CountingSendEndpoint(channel, status, ctx, sent);
    }

    /** The channel's {@code session-id}, or 0 when it names none. */
    private static int sessionOf(UdpChannel channel) {
        String session = channel.channelUri().get(io.aeron.CommonContext.SESSION_ID_PARAM_NAME);
        try {
            return session == null ? 0 : Integer.parseInt(session);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    ReceiveChannelEndpoint newReceiveEndpoint(UdpChannel channel, DataPacketDispatcher dispatcher,
                                              AtomicCounter status, MediaDriver.Context ctx) {
        countingReceives = true;
        int port = channel.remoteData().getPort();
        return new CountingReceiveEndpoint(channel, dispatcher, status, ctx, received, allowed.get(port),
            refused.computeIfAbsent(port, p -> new AtomicLong()), sessions.get(port),
            foreignSession.computeIfAbsent(port, p -> new AtomicLong()),
            foreignSetups.computeIfAbsent(port, p -> new AtomicLong()));
    }

    private static class CountingSendEndpoint extends SendChannelEndpoint {
        private final AtomicLong sent;

        CountingSendEndpoint(UdpChannel channel, AtomicCounter status, MediaDriver.Context ctx, AtomicLong sent) {
            super(channel, status, ctx);
            this.sent = sent;
        }

        @Override
        public int send(ByteBuffer buffer) {
            int bytes = super.send(buffer);
            if (bytes > 0) {
                sent.lazySet(sent.get() + 1);
            }
            return bytes;
        }
    }

    /** A SETUP frame's session id: after its length (4 bytes), version, flags, type (4) and term offset (4). */
    static final int SETUP_SESSION_ID_OFFSET = 12;

    /** Tells {@code watch} (when there is one) of a SETUP frame of its session at the start of {@code buffer}. */
    static void tellSetup(StatusWatch watch, ByteBuffer buffer) {
        int p = buffer.position();
        if (watch == null || buffer.remaining() < io.aeron.protocol.SetupFlyweight.HEADER_LENGTH) {
            return;
        }
        java.nio.ByteOrder order = buffer.order();
        buffer.order(java.nio.ByteOrder.LITTLE_ENDIAN); // Aeron's frames are little-endian
        try {
            if ((buffer.getShort(p + io.aeron.protocol.HeaderFlyweight.TYPE_FIELD_OFFSET) & 0xFFFF)
                == io.aeron.protocol.HeaderFlyweight.HDR_TYPE_SETUP
                && buffer.getInt(p + SETUP_SESSION_ID_OFFSET) == watch.sessionId) {
                watch.onSetupSent();
            }
        } finally {
            buffer.order(order);
        }
    }

    /** A multicast send endpoint that tells its {@link StatusWatch} each status message it takes and SETUP it sends. */
    private static final class WatchingSendEndpoint extends CountingSendEndpoint {
        private final StatusWatch watch;

        WatchingSendEndpoint(UdpChannel channel, AtomicCounter status, MediaDriver.Context ctx, AtomicLong sent,
                             StatusWatch watch) {
            super(channel, status, ctx, sent);
            this.watch = watch;
        }

        @Override
        public int send(ByteBuffer buffer) {
            tellSetup(watch, buffer);
            return super.send(buffer);
        }

        @Override
        public void onStatusMessage(io.aeron.protocol.StatusMessageFlyweight msg, UnsafeBuffer buffer, int length,
                                    InetSocketAddress srcAddress, io.aeron.driver.DriverConductorProxy conductor) {
            super.onStatusMessage(msg, buffer, length, srcAddress, conductor);
            tell(watch, msg, srcAddress);
        }
    }

    /** Tells {@code watch} (when there is one) the position of a status message its publication took. */
    private static void tell(StatusWatch watch, io.aeron.protocol.StatusMessageFlyweight msg,
                             InetSocketAddress srcAddress) {
        if (watch == null || msg.sessionId() != watch.sessionId
            || (msg.flags() & io.aeron.protocol.StatusMessageFlyweight.SEND_SETUP_FLAG) != 0) {
            return; // another session's, or a request for a SETUP (no position yet)
        }
        watch.onStatus(srcAddress.getAddress(), msg.consumptionTermId(), msg.consumptionTermOffset(),
            msg.receiverWindowLength());
    }

    /**
     * A dynamic MDC send endpoint that takes control frames from its guard's addresses only (none without a guard).
     * Aeron's own checks follow for what passes: a status message adds or refreshes a destination (keyed by its
     * receiver id and source port), a NAK is answered to every destination. With a watch, every status message that
     * passed is told to it.
     */
    private static final class GuardedSendEndpoint extends CountingSendEndpoint {
        private final ControlGuard guard;
        private final StatusWatch watch;

        GuardedSendEndpoint(UdpChannel channel, AtomicCounter status, MediaDriver.Context ctx, AtomicLong sent,
                            ControlGuard guard, StatusWatch watch) {
            super(channel, status, ctx, sent);
            this.guard = guard;
            this.watch = watch;
        }

        @Override
        public int send(ByteBuffer buffer) {
            tellSetup(watch, buffer);
            return super.send(buffer);
        }

        private boolean refuse(InetSocketAddress src) {
            return guard == null || guard.refuse(src);
        }

        @Override
        public void onStatusMessage(io.aeron.protocol.StatusMessageFlyweight msg, UnsafeBuffer buffer, int length,
                                    InetSocketAddress srcAddress, io.aeron.driver.DriverConductorProxy conductor) {
            if (!refuse(srcAddress)) {
                super.onStatusMessage(msg, buffer, length, srcAddress, conductor);
                tell(watch, msg, srcAddress);
            }
        }

        @Override
        public void onNakMessage(io.aeron.protocol.NakFlyweight msg, UnsafeBuffer buffer, int length,
                                 InetSocketAddress srcAddress) {
            if (!refuse(srcAddress)) {
                super.onNakMessage(msg, buffer, length, srcAddress);
            }
        }

        @Override
        public void onRttMeasurement(io.aeron.protocol.RttMeasurementFlyweight msg, UnsafeBuffer buffer, int length,
                                     InetSocketAddress srcAddress) {
            if (!refuse(srcAddress)) {
                super.onRttMeasurement(msg, buffer, length, srcAddress);
            }
        }

        @Override
        public void onError(io.aeron.protocol.ErrorFlyweight msg, UnsafeBuffer buffer, int length,
                            InetSocketAddress srcAddress, io.aeron.driver.DriverConductorProxy conductor) {
            if (!refuse(srcAddress)) {
                super.onError(msg, buffer, length, srcAddress, conductor);
            }
        }

        @Override
        public void onResponseSetup(io.aeron.protocol.ResponseSetupFlyweight msg, UnsafeBuffer buffer, int length,
                                    InetSocketAddress srcAddress, io.aeron.driver.DriverConductorProxy conductor) {
            if (!refuse(srcAddress)) {
                super.onResponseSetup(msg, buffer, length, srcAddress, conductor);
            }
        }
    }

    private static final class CountingReceiveEndpoint extends ReceiveChannelEndpoint {
        private final AtomicLong received;
        private final java.net.InetAddress onlyFrom;
        private final AtomicLong refused;
        /** The only session taken; null takes any. */
        private final Integer session;
        private final AtomicLong foreignSession;
        private final AtomicLong foreignSetups;

        CountingReceiveEndpoint(UdpChannel channel, DataPacketDispatcher dispatcher, AtomicCounter status,
                                MediaDriver.Context ctx, AtomicLong received, java.net.InetAddress onlyFrom,
                                AtomicLong refused, Integer session, AtomicLong foreignSession,
                                AtomicLong foreignSetups) {
            super(channel, dispatcher, status, ctx);
            this.received = received;
            this.onlyFrom = onlyFrom;
            this.refused = refused;
            this.session = session;
            this.foreignSession = foreignSession;
            this.foreignSetups = foreignSetups;
        }

        /** True when a frame of session {@code sessionId} must be dropped (and is counted). */
        private boolean otherSession(int sessionId) {
            if (session == null || session == sessionId) {
                return false;
            }
            foreignSession.lazySet(foreignSession.get() + 1);
            return true;
        }

        /** True when a frame from {@code src} must be dropped (and is counted). */
        private boolean refuse(InetSocketAddress src) {
            if (onlyFrom == null || onlyFrom.equals(src.getAddress())) {
                return false;
            }
            refused.lazySet(refused.get() + 1);
            return true;
        }

        @Override
        public int onDataPacket(DataHeaderFlyweight header, UnsafeBuffer buffer, int length,
                                InetSocketAddress srcAddress, int transportIndex) {
            if (refuse(srcAddress) || otherSession(header.sessionId())) {
                return 0;
            }
            received.lazySet(received.get() + 1);
            return super.onDataPacket(header, buffer, length, srcAddress, transportIndex);
        }

        @Override
        public void onSetupMessage(io.aeron.protocol.SetupFlyweight header, UnsafeBuffer buffer, int length,
                                   InetSocketAddress srcAddress, int transportIndex) {
            if (refuse(srcAddress)) {
                return;
            }
            if (otherSession(header.sessionId())) {
                foreignSetups.lazySet(foreignSetups.get() + 1);
                return;
            }
            super.onSetupMessage(header, buffer, length, srcAddress, transportIndex);
        }

        @Override
        public void onRttMeasurement(io.aeron.protocol.RttMeasurementFlyweight header, UnsafeBuffer buffer,
                                     int length, InetSocketAddress srcAddress, int transportIndex) {
            if (!refuse(srcAddress) && !otherSession(header.sessionId())) {
                super.onRttMeasurement(header, buffer, length, srcAddress, transportIndex);
            }
        }
    }
}
