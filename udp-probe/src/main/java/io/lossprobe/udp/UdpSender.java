package io.lossprobe.udp;

import io.lossprobe.core.transport.WakeProbe;
import io.lossprobe.core.transport.Closing;
import io.lossprobe.core.transport.LoopErrors;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SendPacing;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Timing;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.netty.HeldMemoryEstimator;
import io.lossprobe.netty.NettyIo;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.unix.IntegerUnixChannelOption;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One connected datagram socket per flow, all on one event loop that also runs the send loop: writes queue in
 * Netty's outbound buffer and each flow's flush goes out as one sendmmsg.
 */
final class UdpSender implements SenderEndpoint {
    /** Shortest gap between the starts of two send cycles that are not behind (see {@link #pacing}). */
    static final long DEFAULT_MIN_CYCLE_NS = 50_000;
    /** Linux IP_RECVERR (SOL_IP = 0, optname 11, linux/in.h): report send errors, queue ICMP errors. */
    static final IntegerUnixChannelOption IP_RECVERR = new IntegerUnixChannelOption("IP_RECVERR", 0, 11);
    /** Linux IPV6_MULTICAST_HOPS (IPPROTO_IPV6 = 41, optname 18, linux/in6.h): the hop limit of multicast sent. */
    static final IntegerUnixChannelOption IPV6_MULTICAST_HOPS = new IntegerUnixChannelOption("IPV6_MULTICAST_HOPS",
        41, 18);

    /**
     * At most this many CPUs, the precision mode's spinning threads (the receivers, and the sender above a few
     * thousand messages/s) hold every CPU, and a thread that loses its CPU waits for the scheduler's tick.
     */
    static final int FEW_CPUS = 2;
    /**
     * Netty path: pooled buffer memory a flow's queued writes may hold before its writer answers BLOCKED; a blocked
     * flow holds at most this plus one GSO batch's buffer (docs/performance.md, "Memory a blocked flow holds").
     */
    static final int HIGH_WATER_MARK_BYTES = 1024 * 1024;
    private final EventLoopGroup group;
    private final EventLoop loop;
    private final List<Channel> channels;
    private final MessageWriter[] writers;
    /** The native send path's one socket and table ({@code udp.send=native}); null on the Netty path. */
    private final NativeBatchSender nativeSender;
    private final LoopErrors errors;
    private final Map<String, Long> environment;
    private final SendPacing pacing;
    /** The precision timing mode: its receivers spin, and its steps say so on a host with few CPUs. */
    private final boolean precision;
    /** Echo mode with kernel stamps: the thread that reads the replies; else null (Netty reads them here). */
    private final StampedReader replyReader;
    private long purgesAtLastStep;
    /** {@code SenderSpec.punched}: each flow's destination, from its receiver's punch; else null. */
    private final PunchedDestinations punches;
    /** With {@link #punches}: the port each flow's data leaves from. */
    private final int[] sourcePorts;
    /** With {@link #punches} on the Netty path: the flows whose socket is connected to its destination. */
    private final boolean[] connected;

    private UdpSender(EventLoopGroup group, List<Channel> channels, MessageWriter[] writers,
                      NativeBatchSender nativeSender, LoopErrors errors, Map<String, Long> env, boolean precision,
                      SendPacing pacing, StampedReader replyReader, PunchedDestinations punches, int[] sourcePorts) {
        this.punches = punches;
        this.sourcePorts = sourcePorts;
        this.connected = new boolean[writers.length];
        this.group = group;
        this.nativeSender = nativeSender;
        this.replyReader = replyReader;
        this.precision = precision;
        this.errors = errors;
        this.pacing = pacing;
        this.loop = group.next();
        this.channels = channels;
        this.writers = writers;
        this.environment = env;
    }

    static UdpSender open(SenderSpec spec) throws Exception {
        NettyIo io = NettyIo.choose(UdpOptions.IO.key(), UdpOptions.IO.read(spec.options()));
        int sndbuf = UdpOptions.SNDBUF.read(spec.options());
        int flows = spec.plan().ports();
        int messagesPerBuffer = GsoSends.messagesPerGsoSend(io, spec.plan().messageSize(),
            UdpOptions.GSO.read(spec.options()));
        boolean recvErr = recvErrOption(io, UdpOptions.RECVERR.read(spec.options()));
        boolean precision = Timing.precision(spec.options());
        // The loop sleeps between cycles in both modes: the precision mode's pacing wakes it early and spins only
        // the last stretch to each intended time (SendPacing.PRECISION), so on a small host the sender does not
        // hold a CPU the receivers' spinning needs.
        EventLoopGroup group = io.newGroup("lossprobe-udp-tx");
        List<Channel> channels = new ArrayList<>();
        MessageWriter[] writers = new MessageWriter[flows];
        NativeBatchSender nativeSender = null;
        LoopErrors errors = LoopErrors.perFlow("sender socket", "udp", spec.plan().basePort(), flows);
        // Echo mode: lossprobe's own reader takes the replies with kernel stamps where it can, so the round trip
        // ends when the reply reached this host, not when this thread woke up to read it.
        boolean stampedReplies = spec.replies() != null
            && UdpReceiveSettings.kernelTimestamps(io, UdpOptions.TIMESTAMPS.read(spec.options()));
        StampedReader replyReader = null;
        PunchedDestinations punches = null;
        int[] sourcePorts = new int[flows];
        try {
            if (spec.punched()) {
                punches = new PunchedDestinations(new io.lossprobe.core.wire.Punch(spec.auth(), spec.runId(), flows),
                    java.net.InetAddress.getByName(spec.targetHost()), flows);
            }
            if (nativeSend(io, spec, precision)) {
                nativeSender = openNative(spec, messagesPerBuffer, sndbuf, recvErr, group.next());
                for (int i = 0; i < flows; i++) {
                    writers[i] = nativeSender.writer(i);
                }
                if (punches != null) {
                    java.util.Arrays.fill(sourcePorts, nativeSender.bind(spec.sourceHost() == null ? null
                        : java.net.InetAddress.getByName(spec.sourceHost())));
                } else if (UdpMulticast.source(spec.options()) != null) {
                    nativeSender.bind(UdpMulticast.source(spec.options())); // SSM: from the receivers' source
                }
            }
            for (int i = 0; nativeSender == null && i < flows; i++) {
                DatagramWriter writer = new DatagramWriter(i, spec.plan().messageSize(), messagesPerBuffer,
                    spec.failures(), recvErr, errors);
                writer.replies = spec.replies() == null ? null : spec.replies()[i];
                writer.punches = punches;
                Channel ch = nettyFlow(spec, group, io, i, writer, sndbuf, recvErr, stampedReplies);
                sourcePorts[i] = ((InetSocketAddress) ch.localAddress()).getPort();
                writer.attach(ch);
                channels.add(ch);
                writers[i] = writer;
            }
            if (stampedReplies) {
                replyReader = replyReader(spec, channels, errors);
            }
        } catch (Exception e) {
            closeOpened(nativeSender, replyReader, channels, group);
            throw new java.io.IOException("cannot open UDP senders to " + spec.targetHost() + ": " + e.getMessage(), e);
        }
        Map<String, Long> env = socketEnvironment(sndbuf, messagesPerBuffer, recvErr, nativeSender, channels);
        // Echo mode answers each request as it comes back: waiting between cycles there would add to round trips.
        long minCycleNs = spec.replies() != null ? 0 : UdpOptions.MIN_CYCLE_NS.read(spec.options());
        tuneSendThread(spec, precision, group, env);
        if (spec.replies() != null) {
            env.put(UdpEnvironment.REPLY_KERNEL_TIMESTAMPS.key, stampedReplies ? 1L : 0L);
        }
        return new UdpSender(group, channels, writers, nativeSender, errors, env, precision,
                precision ? SendPacing.PRECISION : defaultPacing(minCycleNs), replyReader, punches, sourcePorts);
    }

    /**
     * The default timing's pacing: a minimum cycle, an early wake-up, and the flows staggered, so that their messages
     * fall due one after another instead of every flow's message k at one instant. Unstaggered, 48 flows at 30k/s
     * sent a burst of 48 every 1.6 ms: the last of each left 48 loopback deliveries after its stamp (transit p50
     * 100 us against 3 us for one flow, measured here), and a path saw 48-message bursts the plan did not ask for.
     */
    static SendPacing defaultPacing(long minCycleNs) {
        return SendPacing.DEFAULT.withMinCycleNs(minCycleNs).withEarlyWakeNs(SendPacing.EARLY_WAKE_NS)
            .withStaggerFlows(true);
    }

    /** One flow's Netty socket, connected to its receiver, {@code writer} its handler. */
    private static Channel nettyFlow(SenderSpec spec, EventLoopGroup group, NettyIo io, int i, DatagramWriter writer,
                                     int sndbuf, boolean recvErr, boolean stampedReplies) throws Exception {
        Bootstrap b = multicast(new Bootstrap().group(group), io, spec)
            .option(ChannelOption.SO_SNDBUF, sndbuf)
            // Bounded memory: past 1 MiB of buffers held by queued writes (EAGAIN: the socket's buffer is
            // full) the flow reports BLOCKED and falls behind instead.
            .option(ChannelOption.WRITE_BUFFER_WATER_MARK,
                new WriteBufferWaterMark(HIGH_WATER_MARK_BYTES / 4, HIGH_WATER_MARK_BYTES))
            .option(ChannelOption.MESSAGE_SIZE_ESTIMATOR, HeldMemoryEstimator.INSTANCE)
            .handler(writer);
        if (recvErr) {
            b.option(IP_RECVERR, 1);
        }
        int tos = spec.plan().tosOf(i);
        if (tos >= 0) {
            b.option(ChannelOption.IP_TOS, tos); // IPV6_TCLASS too on an IPv6 socket (Netty's epoll and NIO alike)
        }
        if (spec.replies() != null) {
            // Echo mode: replies queue here while this thread sends; as much room as for the requests.
            b.option(ChannelOption.SO_RCVBUF, sndbuf);
        }
        if (stampedReplies) {
            b.option(ChannelOption.AUTO_READ, false);
        }
        if (spec.punched()) {
            // Bound, not connected, until the receiver's punch says where the flow's data goes (awaitPunches).
            boolean v6 = java.net.InetAddress.getByName(spec.targetHost()) instanceof java.net.Inet6Address;
            String from = spec.sourceHost() != null ? spec.sourceHost() : v6 ? "::" : "0.0.0.0";
            return b.bind(new InetSocketAddress(from, 0)).sync().channel();
        }
        return b.connect(new InetSocketAddress(spec.targetHost(), spec.plan().port(i))).sync().channel();
    }

    /**
     * The flow's socket type; to a multicast group ({@code udp.group}: the target is the group) a socket of the
     * group's family with the run's TTL, on the named interface if one is.
     */
    private static Bootstrap multicast(Bootstrap b, NettyIo io, SenderSpec spec) throws java.io.IOException {
        java.net.InetAddress group = UdpMulticast.group(spec.options());
        if (group == null) {
            return b.channel(io.datagramChannel());
        }
        int ttl = UdpMulticast.TTL.read(spec.options()).intValue();
        b.channelFactory(UdpMulticast.channels(io.datagramChannel(), group))
            .option(ChannelOption.IP_MULTICAST_TTL, ttl);
        if (group instanceof java.net.Inet6Address && io == NettyIo.EPOLL) {
            // Netty's epoll sets IP_MULTICAST_TTL at the IPv4 level even on an IPv6 socket, where the hop limit of
            // multicast is IPV6_MULTICAST_HOPS: measured in the lab, --ttl 2 left with hop limit 1 without this.
            b.option(IPV6_MULTICAST_HOPS, ttl);
        }
        java.net.NetworkInterface on = UdpMulticast.sendInterface(spec.options());
        if (on != null) {
            b.option(ChannelOption.IP_MULTICAST_IF, on);
        }
        java.net.InetAddress source = UdpMulticast.source(spec.options());
        if (source != null) {
            b.localAddress(new InetSocketAddress(source, 0)); // SSM: the receivers take this source only
        }
        return b;
    }

    /**
     * Tunes the sending thread and reports it in {@code env}. Both modes: 1 ns of timer slack (its timers fired
     * 50-60 us late at the median with Linux's default 50 us; 12 us with 1 ns, measured at 1k/s). Pinned only in the
     * precision mode, when asked.
     */
    private static void tuneSendThread(SenderSpec spec, boolean precision, EventLoopGroup group, Map<String, Long> env)
        throws Exception {
        ThreadTuning tuning = ThreadTuning.of(spec.options(), precision, 0);
        group.next().submit(tuning::applyToCurrentThread).get(30, TimeUnit.SECONDS);
        env.put(UdpEnvironment.SEND_TIMER_SLACK_NS.key, tuning.timerSlackNs());
        if (!precision) {
            // The floor of a sender that sleeps between cycles, on this thread as tuned (a step notes it when its
            // delay is near it).
            group.next().submit(() -> WakeProbe.measure(env)).get(30, TimeUnit.SECONDS);
        }
        if (precision) {
            env.put(UdpEnvironment.TIMING_PRECISION.key, 1L);
            env.put(UdpEnvironment.SEND_PINNED_THREADS.key, (long) tuning.pinnedThreads());
            env.put(UdpEnvironment.SEND_SLICE_NS.key, tuning.sliceNs());
        }
    }

    /** A failed open: what it opened so far closed. */
    private static void closeOpened(NativeBatchSender nativeSender, StampedReader replyReader, List<Channel> channels,
                                    EventLoopGroup group) {
        if (nativeSender != null) {
            nativeSender.close();
        }
        if (replyReader != null) {
            replyReader.close(Closing.deadline());
        }
        for (Channel c : channels) {
            c.close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** The sending sockets' part of the environment: buffers, GSO, the native path, egress drops reported. */
    private static Map<String, Long> socketEnvironment(int sndbuf, int messagesPerBuffer, boolean recvErr,
                                                       NativeBatchSender nativeSender, List<Channel> channels) {
        Map<String, Long> env = new HashMap<>();
        env.put(UdpEnvironment.SEND_BUFFER_REQUESTED.key, (long) sndbuf);
        env.put(UdpEnvironment.GSO_SEGMENTS_PER_SEND.key, (long) messagesPerBuffer);
        env.put(SenderEndpoint.MESSAGES_PER_PACKET_MAX, (long) messagesPerBuffer);
        env.put(UdpEnvironment.NATIVE_SEND.key, nativeSender != null ? 1L : 0L);
        if (nativeSender != null) {
            env.put(SenderEndpoint.EGRESS_DROPS_REPORTED, recvErr ? nativeSender.recvErrOn() : 0L);
            env.put(UdpEnvironment.SEND_BUFFER_GRANTED.key, nativeSender.sendBufferGranted());
        } else {
            // Read back from the socket: Bootstrap only logs an option it could not set.
            env.put(SenderEndpoint.EGRESS_DROPS_REPORTED,
                recvErr ? (long) channels.get(0).config().getOption(IP_RECVERR) : 0L);
            env.put(UdpEnvironment.SEND_BUFFER_GRANTED.key, (long) ((io.netty.channel.socket.DatagramChannelConfig)
                channels.get(0).config()).getSendBufferSize());
        }
        return env;
    }

    /**
     * {@code udp.send}: native needs the native piece, epoll-side I/O (not {@code udp.io=nio}), stream mode (echo
     * replies come back to each flow's own connected socket) and the default timing (the precision mode sends each
     * message at its own time, one call each, and is measured on the Netty path); auto takes it wherever it can.
     */
    static boolean nativeSend(NettyIo io, SenderSpec spec, boolean precision) {
        String o = UdpOptions.SEND.read(spec.options());
        String why = !NativeUdp.available() ? "the native piece is unavailable: " + NativeUdp.unavailableBecause()
            : io != NettyIo.EPOLL ? "it needs native epoll, not Java NIO"
            : spec.replies() != null ? "echo mode uses the Netty path"
            : precision ? "the precision timing mode uses the Netty path"
            : multicastNeedsNetty(spec.options()) ? "a multicast TTL other than 1 or a named udp.interface is set "
                + "on the Netty path" : null;
        if (o.equals("native") && why != null) {
            throw new IllegalStateException("udp.send=native is not available here: " + why);
        }
        return why == null && !o.equals("netty");
    }

    /**
     * The native piece sets no multicast options on its socket: the kernel's defaults (TTL 1, the route's interface)
     * are what it sends with, so any other setting takes the Netty path.
     */
    static boolean multicastNeedsNetty(Map<String, String> options) {
        return UdpMulticast.group(options) != null
            && (UdpMulticast.TTL.read(options) != 1 || UdpMulticast.INTERFACE.read(options) != null);
    }

    private static NativeBatchSender openNative(SenderSpec spec, int segmentsPerSend, int sndbuf, boolean recvErr,
                                                EventLoop loop) throws java.io.IOException {
        int[] ports = new int[spec.plan().ports()];
        int[] tos = new int[ports.length];
        for (int i = 0; i < ports.length; i++) {
            ports[i] = spec.plan().port(i);
            tos[i] = spec.plan().tosOf(i);
        }
        return NativeBatchSender.open(java.net.InetAddress.getByName(spec.targetHost()), ports, tos,
            spec.plan().messageSize(), segmentsPerSend, sndbuf, recvErr, spec.failures(), loop);
    }

    /**
     * The reader of the echo replies: one thread of its own that waits in epoll_wait (it never spins: the kernel's
     * stamp, not its wake-up, ends each round trip) and accounts each reply on the flow's reply accounting.
     */
    private static StampedReader replyReader(SenderSpec spec, List<Channel> channels, LoopErrors errors)
        throws Exception {
        StampedReader.Socket[] sockets = new StampedReader.Socket[channels.size()];
        for (int i = 0; i < sockets.length; i++) {
            // A connected socket: the kernel takes datagrams from its peer only, so no source check is needed.
            sockets[i] = new StampedReader.Socket(spec.replies()[i],
                ((io.netty.channel.epoll.EpollDatagramChannel) channels.get(i)).fd().intValue(), i, null, null,
                new java.util.concurrent.atomic.AtomicLong(), null);
        }
        StampedReader reader = new StampedReader("lossprobe-udp-replies", sockets, null,
            UdpReceiver.slotBytes(spec.plan().messageSize()), false, errors, new ThreadTuning(false, 0, 0));
        reader.start();
        java.util.concurrent.CompletableFuture.runAsync(() -> { }, reader).get(30, TimeUnit.SECONDS);
        return reader;
    }

    /**
     * {@code udp.recverr}: auto (default: on with native epoll), on, off. With IP_RECVERR a datagram the sending
     * host drops at its own egress (a full qdisc or txqueuelen: ENOBUFS) fails its send, so it counts in
     * {@code sendFailed}; without it Linux reports success and only Udp SndbufErrors grows (udp_send_skb), and
     * the datagram counts as lost. See docs/measurement.md, "Attribution".
     */
    static boolean recvErrOption(NettyIo io, String option) {
        String o = option.toLowerCase(java.util.Locale.ROOT);
        if (!o.equals("auto") && !o.equals("on") && !o.equals("off")) {
            throw new IllegalArgumentException("udp.recverr must be auto, on or off, not '" + option + "'");
        }
        if (o.equals("on") && io != NettyIo.EPOLL) {
            throw new IllegalStateException("udp.recverr needs native epoll (Java NIO cannot set IP_RECVERR)");
        }
        return !o.equals("off") && io == NettyIo.EPOLL;
    }

    @Override
    public int[] sourcePorts() {
        return punches == null ? new int[0] : sourcePorts.clone();
    }

    /**
     * The native path reads its one socket here; the Netty path's sockets hand their punches over on the event loop
     * as they come, and each flow's socket is connected to its destination once it has one.
     */
    @Override
    public int[] awaitPunches(long timeoutNs) throws Exception {
        if (punches == null) {
            throw new UnsupportedOperationException("these senders were not opened to take punches");
        }
        if (nativeSender != null) {
            return nativeSender.awaitPunches(punches, timeoutNs);
        }
        int[] missing = punches.await(timeoutNs);
        for (int i = 0; i < channels.size(); i++) {
            InetSocketAddress to = punches.of(i);
            if (to != null && !connected[i]) {
                channels.get(i).connect(to).sync();
                connected[i] = true;
            }
        }
        return missing;
    }

    @Override
    public void beginStep(int step) {
        if (punches != null && punches.missing().length > 0) {
            throw new IllegalStateException("flows " + java.util.Arrays.toString(punches.missing())
                + " have no punch from their receivers: no step can send to them");
        }
        errors.beginStep();
    }

    @Override
    public TransportReport endStep() {
        long purges = errorQueuePurges();
        long delta = purges - purgesAtLastStep;
        purgesAtLastStep = purges;
        Map<String, Long> counters = new HashMap<>();
        if (delta > 0) {
            counters.put(UdpCounter.SENDER_ERROR_QUEUE_PURGES.key, delta);
        }
        long socketErrors = errors.sinceStepStart();
        if (socketErrors > 0) {
            counters.put(UdpCounter.SENDER_SOCKET_ERRORS.key, socketErrors);
        }
        java.util.List<String> notes = new java.util.ArrayList<>(errors.notes());
        if (replyReader != null) {
            UdpCounter.ClockSteps.REPLIES.report(replyReader.clock().takeReport(), counters, notes);
        }
        int cpus = Runtime.getRuntime().availableProcessors();
        if (precision && cpus <= FEW_CPUS) {
            notes.add("precision timing spins its threads on a host with " + cpus + " CPU(s) (the receivers, and "
                + "the sender before each message): a thread that loses its CPU may get it back only at the "
                + "scheduler's next tick (4 ms at HZ=250), so this step's delay tails are partly the host's; "
                + "precision wants a CPU more than its spinning threads (or use --timing default)");
        }
        return counters.isEmpty() && notes.isEmpty() ? TransportReport.EMPTY
            : new TransportReport(counters, Map.of(), notes);
    }

    /** Times a flow's socket error queue was emptied (ICMP errors queued by IP_RECVERR), over all flows. */
    long errorQueuePurges() {
        long purges = replyReader == null ? 0 : replyReader.errorQueuePurges();
        purges += nativeSender == null ? 0 : nativeSender.errorQueuePurges();
        for (MessageWriter w : writers) {
            purges += w instanceof DatagramWriter d ? d.errorQueuePurges() : 0;
        }
        return purges;
    }

    /** The event loop every sender channel and the send loop run on. */
    EventLoop loop() {
        return loop;
    }

    @Override
    public MessageWriter writer(int flow) {
        return writers[flow];
    }

    /** The senders' one event loop: it runs the send loop and completes every write. */
    @Override
    public java.util.concurrent.ScheduledExecutorService sendExecutor() {
        return loop;
    }

    /**
     * By default a minimum cycle of {@code udp.minCycleNs}: at a few hundred thousand messages per second a cycle
     * every few microseconds would send one message per syscall and wake the receiver once per message; waiting
     * lets each flow's messages leave as one GSO batch. Messages keep their intended send times, so the wait shows
     * in delay and sender lag. A cycle that was full on every flow is behind and is followed at once. In the
     * precision timing mode it paces with {@link SendPacing#PRECISION}: every message leaves at its own intended
     * time, one syscall each, the loop spinning the last stretch before it (all the time at a few thousand messages
     * per second and more).
     */
    @Override
    public SendPacing pacing() {
        return pacing;
    }

    @Override
    public Map<String, Long> environment() {
        return environment;
    }

    /** Replies are accounted on the reply reader (kernel stamps) or else on the senders' one event loop. */
    @Override
    public void onReplyThread(Runnable action) throws Exception {
        if (replyReader != null) {
            java.util.concurrent.CompletableFuture.runAsync(action, replyReader).get(30, TimeUnit.SECONDS);
            return;
        }
        loop.submit(action).get(30, TimeUnit.SECONDS);
    }

    /** Bounded: a send loop that died or hangs must not hang the run's end (see {@link Closing}). */
    @Override
    public void close() {
        if (replyReader != null) {
            replyReader.close(Closing.deadline()); // stopped before Netty closes the sockets it reads
        }
        Closing.closeAll(channels, Channel::close, () -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS));
        if (nativeSender != null) {
            nativeSender.close(); // after the loop that sends on it has stopped
        }
    }
}
