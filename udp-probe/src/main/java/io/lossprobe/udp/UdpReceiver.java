package io.lossprobe.udp;

import io.lossprobe.core.transport.BindFailure;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.counters.ProcFiles;
import io.lossprobe.core.transport.Closing;
import io.lossprobe.core.transport.EchoReplies;
import io.lossprobe.core.transport.LoopErrors;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.netty.NettyIo;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.EpollChannelOption;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One bound datagram socket per flow, spread over a few event loops, reading with recvmmsg (epoll) into one buffer
 * that holds {@value #DATAGRAMS_PER_READ} datagrams. Each datagram goes to its flow's {@link FlowReceiver}.
 *
 * <p>UDP_GRO: with it the kernel queues a sender's GSO send as one buffer and counts a dropped one as one drop in
 * /proc/net/udp, so per-socket drops count packets, not datagrams (loss itself stays exact: it is sent - received;
 * the socket's share becomes a labelled estimate). {@code udp.gro=auto} (default) turns it on for the rest of the run
 * at the first step whose rate makes the sender's GSO sends carry several messages
 * ({@link UdpReceiveSettings#groPays}), where it spares the receiving host most of its work; {@code on} from the
 * start, {@code off} never.
 */
final class UdpReceiver implements ReceiverEndpoint {
    static final int DATAGRAMS_PER_READ = 256;
    /** Keeps large messages from making each read's buffer huge: 256 slots of 64 KiB would be 16 MiB. */
    static final int MAX_READ_BUFFER_BYTES = 1 << 20;
    /** A stamped reader's slot with UDP_GRO: the most the kernel coalesces into one read (64 KiB). */
    static final int GRO_SLOT_BYTES = 65_536;

    private final EventLoopGroup group;
    /**
     * The receiving threads; channel i reads on thread i mod threads (the group's round-robin registration, or
     * the stamped readers' assignment).
     */
    private final List<java.util.concurrent.Executor> loops;
    /** With kernel timestamps: the threads that read the sockets (Netty's loop then only owns them); else empty. */
    private final List<StampedReader> readers;
    private final List<Channel> channels;
    private final int[] ports;
    private final Map<String, Long> environment;
    private volatile Map<Integer, Long> dropsAtWindowStart = Map.of();
    /** Echo mode: the replies sent and dropped, per flow; null otherwise. */
    private final EchoReplies replies;
    /** Per flow: datagrams from an address other than the flow's sender, written by its receiving thread only. */
    private final java.util.concurrent.atomic.AtomicLong[] foreign;
    /** The traffic classes the flows' datagrams arrived with, by step (set once, at open). */
    private DscpTally classes;
    private final long[] foreignAtStepStart;
    /** With UDP_GRO, the most messages one dropped packet carries (socket drops then count packets). */
    private final long groMessagesMax;
    /** UDP_GRO is on: from the start ({@code udp.gro=on}) or since a step turned it on ({@code auto}). */
    private volatile boolean groOn;
    /** {@code udp.gro=auto} with lossprobe's own readers (which can widen their slots): the flows; else 0. */
    private final int groAutoFlows;
    private final long minCycleNs;
    private final LoopErrors errors;
    /** The precision timing mode's busy polling, on from a step's start to its end; null by default. */
    private final BusyPoll busy;

    private UdpReceiver(EventLoopGroup group, List<java.util.concurrent.Executor> loops, List<StampedReader> readers,
                        List<Channel> channels, int[] ports, Map<String, Long> environment,
                        EchoReplies replies, java.util.concurrent.atomic.AtomicLong[] foreign,
                        LoopErrors errors, BusyPoll busy,
                        long groMessagesMax, boolean groOn, int groAutoFlows, long minCycleNs) {
        this.busy = busy;
        this.groMessagesMax = groMessagesMax;
        this.groOn = groOn;
        this.groAutoFlows = groAutoFlows;
        this.minCycleNs = minCycleNs;
        this.replies = replies;
        this.foreign = foreign;
        this.errors = errors;
        this.foreignAtStepStart = new long[foreign.length];
        this.group = group;
        this.loops = loops;
        this.readers = readers;
        this.channels = channels;
        this.ports = ports;
        this.environment = environment;
    }

    static UdpReceiver open(ReceiverSpec spec) throws Exception {
        UdpReceiveSettings set = UdpReceiveSettings.of(spec);
        NettyIo io = set.io();
        int size = set.messageSize();
        boolean gro = set.gro();
        boolean stamped = set.stamped();
        // With kernel timestamps lossprobe's own threads read the sockets and Netty's one loop only owns them.
        BusyPoll busy = set.precision() ? new BusyPoll() : null;
        EventLoopGroup group = stamped ? io.newGroup("lossprobe-udp-rx", 1)
            : io.newGroup("lossprobe-udp-rx", set.threads(), busy);
        List<Channel> channels = new ArrayList<>();
        int[] ports = new int[spec.flows().length];
        java.util.concurrent.atomic.AtomicLong[] foreign = new java.util.concurrent.atomic.AtomicLong[ports.length];
        LoopErrors errors = LoopErrors.perFlow("receive", "udp", spec.plan().basePort(), spec.flows().length);
        // Between hosts data is taken only from the controller's address; anything else is foreign, never counted
        // and never answered (the tag would refuse it too: this also keeps it from costing a tag check).
        java.net.InetAddress onlyFrom = spec.peer() == null ? null : java.net.InetAddress.getByName(spec.peer());
        boolean echo = spec.plan().echo();
        EchoReplies replies = echo ? new EchoReplies(spec.flows()) : null;
        // Between hosts, replies go only to the controller's address: a request claiming another source
        // (spoofed) is counted but never answered, so the server cannot be made to reflect traffic.
        java.net.InetAddress replyOnlyTo = echo && spec.echoHost() != null
            ? java.net.InetAddress.getByName(spec.echoHost()) : null;
        List<StampedReader> readers = new ArrayList<>();
        // With --dscp and lossprobe's own reads, each arrival's class is read (IP_RECVTOS) and counted per flow;
        // Netty's reads pass no control buffer, so there the classes are not checked.
        java.util.concurrent.atomic.AtomicLongArray[] classes = null;
        if (stamped && !spec.plan().dscp().isEmpty()) {
            classes = new java.util.concurrent.atomic.AtomicLongArray[ports.length];
            for (int i = 0; i < classes.length; i++) {
                classes[i] = new java.util.concurrent.atomic.AtomicLongArray(StampedReader.UNREAD_CLASS + 1);
            }
        }
        // Multicast (udp.group): each flow's socket is bound to the group and its port, and joins the group.
        java.net.InetAddress joining = UdpMulticast.group(spec.options());
        try {
            java.net.NetworkInterface joinOn = joining == null ? null
                : UdpMulticast.receiveInterface(spec.options(), spec.bindAddress());
            java.net.InetAddress joinSource = UdpMulticast.source(spec.options());
            for (int i = 0; i < spec.flows().length; i++) {
                FlowReceiver flow = spec.flows()[i];
                foreign[i] = new java.util.concurrent.atomic.AtomicLong();
                Bootstrap b = socketOptions(socketType(new Bootstrap().group(group), io, joining), set, echo);
                if (spec.plan().tosOf(i) >= 0) {
                    b.option(ChannelOption.IP_TOS, spec.plan().tosOf(i)); // echo replies leave in the flow's class
                }
                if (stamped) {
                    b.option(ChannelOption.AUTO_READ, false).handler(new OwnedOnlyHandler(errors, i));
                    if (gro) {
                        b.option(EpollChannelOption.UDP_GRO, true);
                    }
                } else {
                    nettyReads(b, io, size, gro).handler(new DatagramHandler(flow, io == NettyIo.EPOLL, onlyFrom,
                        replyOnlyTo, echo ? replies.flow(i) : null, errors, i, foreign[i]));
                }
                ports[i] = spec.plan().port(i);
                channels.add(b.bind(joining == null ? new InetSocketAddress(spec.bindAddress(), ports[i])
                    : new InetSocketAddress(joining, ports[i])).sync().channel());
                if (joining != null) {
                    UdpMulticast.join(channels.get(i), joining, joinOn, joinSource);
                }
            }
            if (stamped) {
                readers.addAll(StampedReader.startAll(spec, channels, set.threads(), onlyFrom, replyOnlyTo,
                    replies, errors, foreign, set.tuning(), busy, gro ? GRO_SLOT_BYTES : slotBytes(size),
                    set.groAuto(), classes, set.readIntervalNs(), socketCapacity(channels.get(0), size),
                    set.echoWakeEarlyNs()));
            }
        } catch (Exception e) {
            closeOpened(readers, channels, group);
            throw BindFailure.of("bind UDP receivers", spec.bindAddress(),
                spec.plan().basePort(), spec.plan().port(spec.flows().length - 1), e);
        }
        List<java.util.concurrent.Executor> loops = receiveLoops(readers, group, set);
        // With GRO a drop is a packet: a sender's GSO send, of at most 64 messages from lossprobe's sender.
        Map<String, Long> environment = new HashMap<>(set.environment(channels.get(0)));
        if (!spec.plan().dscp().isEmpty()) {
            environment.put(UdpEnvironment.DSCP_CHECKED.key, classes != null ? 1L : 0L);
        }
        UdpReceiver receiver = new UdpReceiver(group, loops, readers, channels, ports, environment, replies,
            foreign, errors, busy, GsoSends.mostMessagesPerGsoSend(size), gro, set.groAuto() ? ports.length : 0,
            UdpOptions.MIN_CYCLE_NS.read(spec.options()));
        receiver.classes = new DscpTally(spec.plan(), classes);
        return receiver;
    }

    /**
     * A flow's socket type; joining a multicast group, one of the group's family, its port shareable with other
     * receivers of the group on this host.
     */
    private static Bootstrap socketType(Bootstrap b, NettyIo io, java.net.InetAddress joining) {
        if (joining == null) {
            return b.channel(io.datagramChannel());
        }
        return b.channelFactory(UdpMulticast.channels(io.datagramChannel(), joining))
            .option(ChannelOption.SO_REUSEADDR, true);
    }

    /**
     * Datagrams of {@code size} bytes one socket's granted receive buffer holds (the kernel counts each datagram's
     * buffer overhead against it too).
     */
    static long socketCapacity(Channel socket, int size) {
        int granted = ((io.netty.channel.socket.DatagramChannelConfig) socket.config()).getReceiveBufferSize();
        return Math.max(1, granted / (size + StampedReader.QUEUED_OVERHEAD_BYTES));
    }

    /** The socket options of every flow's socket: its receive buffer, echo mode's reply mark, busy polling. */
    private static Bootstrap socketOptions(Bootstrap b, UdpReceiveSettings set, boolean echo) {
        b.option(ChannelOption.SO_RCVBUF, set.rcvbuf());
        if (echo) {
            // Replies queue in Netty only up to the mark; past it they are dropped (reply loss), not kept.
            b.option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(256 * 1024, 1024 * 1024));
        }
        if (set.precision() && set.io() == NettyIo.EPOLL) {
            // Kernel busy polling of the device queue for this socket's reads (a NIC with NAPI; loopback
            // has none, so there it changes nothing).
            b.option(SO_BUSY_POLL, BUSY_POLL_US);
        }
        return b;
    }

    /** A failed open: what it opened so far closed, the readers first. */
    private static void closeOpened(List<StampedReader> readers, List<Channel> channels, EventLoopGroup group) {
        for (StampedReader r : readers) {
            r.close(Closing.deadline());
        }
        for (Channel c : channels) {
            c.close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /**
     * The receiving threads: the stamped readers, or Netty's loops; in the precision mode each tuned (a stamped reader
     * tunes itself as it starts).
     */
    private static List<java.util.concurrent.Executor> receiveLoops(List<StampedReader> readers,
                                                                    EventLoopGroup group, UdpReceiveSettings set)
        throws Exception {
        List<java.util.concurrent.Executor> loops = new ArrayList<>(readers);
        if (!set.stamped()) {
            for (int i = 0; i < set.threads(); i++) {
                loops.add(group.next());
            }
        }
        if (set.precision()) {
            for (java.util.concurrent.Executor loop : loops) {
                if (!(loop instanceof StampedReader)) { // a reader tunes itself as it starts
                    java.util.concurrent.CompletableFuture.runAsync(set.tuning()::applyToCurrentThread, loop)
                        .get(30, TimeUnit.SECONDS);
                }
            }
        }
        return loops;
    }

    /** SO_BUSY_POLL in the precision mode: how long a read may busy-poll the device queue, in microseconds. */
    static final int BUSY_POLL_US = 50;
    /**
     * Linux SO_BUSY_POLL (SOL_SOCKET = 1, optname 46, asm-generic/socket.h); Netty's own option is for its stream
     * channels only.
     */
    static final io.netty.channel.unix.IntegerUnixChannelOption SO_BUSY_POLL =
        new io.netty.channel.unix.IntegerUnixChannelOption("SO_BUSY_POLL", 1, 46);

    /**
     * recvmmsg: one syscall fills the buffer with up to {@value #DATAGRAMS_PER_READ} datagrams, one per slot (at
     * most {@value #MAX_READ_BUFFER_BYTES} bytes per read). One read is one recvmmsg (maxMessagesPerRead 1), so the
     * read's single timestamp is never older than a datagram it covers.
     *
     * <p>With {@code gro} the kernel hands over a sender's GSO batch as one buffer: Netty splits it into datagrams
     * only on its recvmsg path (one batch per syscall), which a payload size of 0 selects. Without native epoll
     * (NIO) a read takes one datagram into a buffer of the message plus one byte, at least 2 KiB.
     */
    private static Bootstrap nettyReads(Bootstrap b, NettyIo io, int messageSize, boolean gro) {
        if (io != NettyIo.EPOLL) {
            return b.option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(Math.max(messageSize + 1,
                2048)));
        }
        int slot = gro ? 0 : slotBytes(messageSize);
        int bufferBytes = gro ? 65_536 : slot * Math.max(1, Math.min(DATAGRAMS_PER_READ, MAX_READ_BUFFER_BYTES / slot));
        b.option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, slot)
            .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(bufferBytes).maxMessagesPerRead(1));
        if (gro) {
            b.option(EpollChannelOption.UDP_GRO, true);
        }
        return b;
    }

    /**
     * A recvmmsg slot: the message plus one spare byte, so an oversized datagram shows as too long instead of being
     * cut to look valid; rounded up to 8 bytes so the header's longs are aligned.
     */
    static int slotBytes(int messageSize) {
        return (messageSize + 1 + 7) & ~7;
    }

    /**
     * Each flow's action runs on the thread that reads its socket (its stamped reader, or its channel's event loop),
     * the flows of one thread in turn and the threads at once: no thread is held while another runs.
     */
    @Override
    public void onFlowThreads(java.util.function.IntConsumer action) throws Exception {
        Map<java.util.concurrent.Executor, List<Integer>> byThread = new java.util.LinkedHashMap<>();
        for (int i = 0; i < channels.size(); i++) {
            java.util.concurrent.Executor thread = readers.isEmpty() ? channels.get(i).eventLoop()
                : readers.get(StampedReader.readerOf(i, readers.size()));
            byThread.computeIfAbsent(thread, t -> new ArrayList<>()).add(i);
        }
        List<java.util.concurrent.CompletableFuture<Void>> runs = new ArrayList<>();
        byThread.forEach((thread, flows) -> runs.add(java.util.concurrent.CompletableFuture.runAsync(
            () -> flows.forEach(action::accept), thread)));
        java.util.concurrent.CompletableFuture.allOf(runs.toArray(new java.util.concurrent.CompletableFuture<?>[0]))
            .get(30, TimeUnit.SECONDS);
    }

    /** From the flow's own bound socket, so the punch leaves from the port its data arrives at. */
    @Override
    public void punch(int flow, InetSocketAddress to, byte[] datagram) throws Exception {
        channels.get(flow).writeAndFlush(new io.netty.channel.socket.DatagramPacket(
            io.netty.buffer.Unpooled.wrappedBuffer(datagram), to)).sync();
    }

    @Override
    public void setPaused(boolean paused) {
        if (!readers.isEmpty()) {
            readers.forEach(r -> r.setPaused(paused));
            return;
        }
        for (Channel c : channels) {
            c.config().setAutoRead(!paused);
        }
    }

    /**
     * On loopback a datagram is queued (or dropped) inside the sender's own syscall, so drops sampled here, on the
     * sending thread after the last warm-up flush, exclude every warm-up datagram exactly.
     */
    @Override
    public void beginWindow() {
        dropsAtWindowStart = ProcFiles.readUdpDrops();
    }

    /**
     * With {@code udp.gro=auto}, the first step whose rate it pays at ({@link UdpReceiveSettings#groPays}) turns
     * UDP_GRO on, for the rest of the run: turned off again, a packet the kernel had already coalesced would be read
     * without its segment size.
     */
    @Override
    public void beginStep(int step, io.lossprobe.core.plan.Level level) throws Exception {
        if (groAutoFlows > 0 && !groOn && UdpReceiveSettings.groPays(groAutoFlows, level, minCycleNs)) {
            // Each reader widens its slots, then sets UDP_GRO on its sockets: no coalesced read meets a small slot.
            onFlowThreads(i -> {
                readers.get(StampedReader.readerOf(i, readers.size())).readCoalesced();
                ((io.netty.channel.epoll.EpollDatagramChannelConfig) channels.get(i).config()).setUdpGro(true);
            });
            groOn = true;
        }
        beginStep(step);
    }

    @Override
    public void beginStep(int step) {
        if (busy != null) {
            busy.set(true);
            for (java.util.concurrent.Executor loop : loops) {
                loop.execute(() -> { }); // a sleeping loop wakes and spins from here on
            }
        }
        for (int i = 0; i < foreign.length; i++) {
            foreignAtStepStart[i] = foreign[i].get();
        }
        classes.beginStep();
        if (replies != null) {
            replies.beginStep();
        }
        errors.beginStep();
    }

    @Override
    public TransportReport endStep() {
        if (busy != null) {
            busy.set(false); // the step's accounting closed: stragglers are counted as late by a sleeping loop
        }
        Map<Integer, Long> now = ProcFiles.readUdpDrops();
        Map<Integer, Map<String, Long>> flows = new HashMap<>();
        long total = 0;
        List<String> notes = new ArrayList<>(errors.notes());
        for (int i = 0; i < ports.length; i++) {
            long delta = now.getOrDefault(ports[i], 0L) - dropsAtWindowStart.getOrDefault(ports[i], 0L);
            long foreignInStep = foreign[i].get() - foreignAtStepStart[i];
            Map<String, Long> flow = new HashMap<>(Map.of(TransportReport.SOCKET_DROPS, delta, TransportReport.FOREIGN,
                foreignInStep));
            if (groOn) {
                flow.put(TransportReport.SOCKET_DROPS_MESSAGES_MAX, groMessagesMax);
            }
            classes.report(i, flow, notes);
            flows.put(i, flow);
            total += delta;
        }
        Map<String, Long> counters = new HashMap<>();
        counters.put(UdpCounter.RECEIVER_SOCKET_DROPS.key, total);
        counters.put(UdpCounter.RECEIVE_GRO.key, groOn ? 1L : 0L);
        RealtimeToMonotonic.Report clockSteps = RealtimeToMonotonic.Report.NONE;
        for (StampedReader r : readers) {
            clockSteps = clockSteps.and(r.clock().takeReport());
        }
        UdpCounter.ClockSteps.RECEIVE.report(clockSteps, counters, notes);
        if (replies != null) {
            replies.report(counters, flows);
        }
        return new TransportReport(counters, flows, notes);
    }

    @Override
    public Map<String, Long> environment() {
        return environment;
    }

    /** Bounded: a receive loop that died or hangs must not hang the run's end (see {@link Closing}). */
    @Override
    public void close() {
        long deadline = Closing.deadline();
        for (StampedReader r : readers) {
            r.close(deadline); // stopped before Netty closes the sockets they read
        }
        Closing.closeAll(channels, Channel::close, () -> group.shutdownGracefully(0, 1, TimeUnit.SECONDS));
    }

    /** The stamped readers (empty when Netty reads); for tests. */
    List<StampedReader> readers() {
        return readers;
    }
}
