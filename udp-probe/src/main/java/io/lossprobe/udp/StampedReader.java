package io.lossprobe.udp;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.transport.EchoReplies;
import io.lossprobe.core.transport.LoopErrors;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.wire.MessageHeader;
import io.netty.channel.Channel;
import io.netty.channel.epoll.EpollDatagramChannel;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One receiving thread that reads its flows' sockets itself, through lossprobe's native piece: recvmmsg with
 * SO_TIMESTAMPNS, so each datagram's arrival time is the kernel's (taken as the packet entered the receiving
 * host's stack, before any queueing or wake-up of this thread), converted from the realtime clock the kernel stamps
 * on to {@link System#nanoTime()}'s by a {@link RealtimeToMonotonic} fed with every read's clock samples.
 * The sockets are Netty's (bound, sized, closed by it) with Netty's reading off ({@code autoRead} false): Netty's
 * epoll loop would read them without the control messages that carry the stamps.
 *
 * <p>In the precision timing mode it does not sleep while a step runs: each pass looks at its sockets without
 * waiting (epoll_wait with a zero timeout) and takes a core. In the default mode's streams it reads every
 * {@linkplain #nextSleepNs read interval} instead of waking for each datagram ({@code udp.readIntervalNs}; sooner
 * when the buffers fill): each arrival carries the kernel's stamp, so when it is read changes no figure, and while
 * this thread is not waiting in epoll_wait a sending thread on this host pays no wake-up per datagram (on a VM
 * measured here, 36% of a one-flow sender's time at 30k/s was waking its receiver). In echo mode, where a reply
 * leaves when its request is read, it waits in epoll_wait like Netty would, and in the default timing it is awake
 * for each request that comes on a schedule it can forecast ({@link ArrivalForecast}): woken a little before the
 * request is due rather than by it, so the responder's wake-up is not in the round trip. Other
 * threads talk to it
 * only through its command queue ({@link #execute}), drained between reads, so a step's accounting begins and
 * closes between datagrams. Echo replies go back from the same thread with one sendto each, at once.
 *
 * <p>Like Netty's path ({@link DatagramHandler}): a datagram from anyone but the flow's sender between hosts
 * is foreign, a request is answered only to the address and port of the flow's first authenticated request, and a
 * reply the socket cannot take now is dropped and counted.
 */
final class StampedReader implements Runnable, Executor {
    /** How long a blocking wait lasts at most, so a close is seen even if a wake-up were lost. */
    static final int WAIT_MS = 100;
    /** In a socket's {@link Socket#classes}: datagrams that came without a class (no IP_TOS control message). */
    static final int UNREAD_CLASS = 64;
    private static final long PAUSED_PARK_NS = TimeUnit.MICROSECONDS.toNanos(200);
    /** {@code udp.readIntervalNs}'s default. */
    static final long DEFAULT_READ_INTERVAL_NS = 1_000_000;
    /** {@link #WAIT_MS} in nanoseconds. */
    private static final long WAIT_NS = TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
    /** A shorter read interval than this is not slept: the reader reads again at once. */
    static final long SHORTEST_SLEEP_NS = 20_000;
    /** Bytes a queued datagram holds in a socket's receive buffer beyond its payload (skb overhead; 768 measured). */
    static final int QUEUED_OVERHEAD_BYTES = 1_024;

    private final Socket[] sockets;
    private final int epfd;
    private final int wakeFd;
    /** While on, the reader never waits (precision timing); null: it always waits in epoll_wait. */
    private final BusyPoll busy;
    /** Bytes per slot and slots per read; this thread widens them for UDP_GRO ({@link #readCoalesced}). */
    private int slotBytes;
    private int batch;
    private final ByteBuffer slots;
    private final ByteBuffer meta;
    private final RealtimeToMonotonic clock = new RealtimeToMonotonic();
    private final Queue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final LoopErrors errors;
    private final ThreadTuning tuning;
    private final Thread thread;
    private volatile boolean running = true;
    /** How often this reader reads when datagrams trickle in (see {@link #nextSleepNs}); 0: wait in epoll_wait. */
    private long readIntervalNs;
    /** Datagrams one socket's receive buffer holds (for {@link #nextSleepNs}). */
    private long socketCapacity = 1;
    /** An echo responder in the default timing: when its next request is due, to be awake for it; else null. */
    private ArrivalForecast forecast;
    private volatile boolean paused;
    /** Datagrams read with a kernel stamp and without one, over the reader's life (for tests and the notes). */
    private final AtomicLong stamped = new AtomicLong();
    private final AtomicLong unstamped = new AtomicLong();
    /** Messages that came several to a read (UDP_GRO coalesced them), over the reader's life (for tests). */
    private final AtomicLong coalesced = new AtomicLong();
    /** Requests after which a forecast of the next stood ({@link #forecastRequests}; written by this thread only). */
    private final AtomicLong forecasts = new AtomicLong();
    /** Times a socket's error queue was emptied (written by this thread only). */
    private final AtomicLong errorQueuePurges = new AtomicLong();

    /**
     * @param sockets    the flows this thread reads, each with its socket's descriptor
     * @param busy       while on, never sleep (precision timing, during steps); null or off: wait in epoll_wait
     * @param slotBytes  bytes per datagram slot: the message size plus one, so a longer datagram shows as too long
     * @param groLater   room for {@link #readCoalesced} later (UDP_GRO's 64 KiB slots)
     */
    StampedReader(String name, Socket[] sockets, BusyPoll busy, int slotBytes, boolean groLater, LoopErrors errors,
                  ThreadTuning tuning) throws java.io.IOException {
        this.sockets = sockets.clone();
        this.busy = busy;
        this.slotBytes = slotBytes;
        this.errors = errors;
        this.tuning = tuning;
        this.batch = batchOf(slotBytes);
        int groBytes = groLater ? batchOf(UdpReceiver.GRO_SLOT_BYTES) * UdpReceiver.GRO_SLOT_BYTES : 0;
        this.slots = ByteBuffer.allocateDirect(Math.max(batch * slotBytes, groBytes)); // big-endian: the header's order
        this.meta = ByteBuffer.allocateDirect(NativeUdp.META_BUFFER_BYTES).order(ByteOrder.nativeOrder());
        this.epfd = check(NativeUdp.epollCreate(), "epoll_create");
        int wake = -1;
        try {
            wake = check(NativeUdp.eventFd(), "eventfd");
            check(NativeUdp.epollAdd(epfd, wake, NativeUdp.WAKE_TOKEN), "epoll_ctl");
            for (int i = 0; i < sockets.length; i++) {
                check(NativeUdp.enableTimestamps(sockets[i].fd), "SO_TIMESTAMPNS");
                if (sockets[i].classes != null) {
                    check(NativeUdp.enableTos(sockets[i].fd, sockets[i].ipv6), "IP_RECVTOS");
                }
                check(NativeUdp.epollAdd(epfd, sockets[i].fd, i), "epoll_ctl");
            }
        } catch (java.io.IOException e) {
            if (wake >= 0) {
                NativeUdp.close(wake);
            }
            NativeUdp.close(epfd);
            throw e;
        }
        this.wakeFd = wake;
        this.thread = new Thread(this, name);
        thread.setDaemon(true);
    }

    private static int batchOf(int slotBytes) {
        return Math.max(1, Math.min(NativeUdp.MAX_BATCH, UdpReceiver.MAX_READ_BUFFER_BYTES / slotBytes));
    }

    /**
     * From now on every read has UDP_GRO's slots (64 KiB: a coalesced read never meets a small slot). Runs on this
     * reader's thread, before its sockets' UDP_GRO is set; needs the room {@code groLater} made.
     */
    void readCoalesced() {
        if (slotBytes != UdpReceiver.GRO_SLOT_BYTES) {
            int b = batchOf(UdpReceiver.GRO_SLOT_BYTES);
            if (b * UdpReceiver.GRO_SLOT_BYTES > slots.capacity()) {
                throw new IllegalStateException("this reader was not made for UDP_GRO");
            }
            slotBytes = UdpReceiver.GRO_SLOT_BYTES;
            batch = b;
        }
    }

    private static int check(int result, String what) throws java.io.IOException {
        if (result < 0) {
            throw new java.io.IOException(what + " failed: errno " + -result);
        }
        return result;
    }

    /**
     * Reads every {@code intervalNs} instead of waiting in epoll_wait (before {@link #start}); {@code socketCapacity}
     * is how many datagrams one of its sockets' receive buffers holds.
     */
    void readEvery(long intervalNs, long socketCapacity) {
        this.readIntervalNs = intervalNs;
        this.socketCapacity = Math.max(1, socketCapacity);
    }

    /**
     * How long to sleep after a pass that read {@code read} datagrams (over all sockets) since the last sleep of
     * {@code sleptNs}: the read interval while little comes, shorter in proportion when a pass read more than an
     * eighth of one socket's buffer, so the fill per pass stays under that at a steady rate (the sum over sockets
     * bounds any one socket's share); 0 below {@link #SHORTEST_SLEEP_NS}, and after a pass that met a datagram without
     * a kernel stamp (its time is the read's: it must be read as it comes). 0 means: wait in epoll_wait (which
     * returns at once when more is queued).
     */
    static long nextSleepNs(long intervalNs, long socketCapacity, long read, long sleptNs, boolean unstamped) {
        if (intervalNs <= 0 || unstamped) {
            return 0;
        }
        long eighth = Math.max(1, socketCapacity / 8);
        long sleep = read <= eighth ? intervalNs
            : (long) (Math.max(sleptNs, SHORTEST_SLEEP_NS) * ((double) eighth / read));
        sleep = Math.min(intervalNs, sleep);
        return sleep < SHORTEST_SLEEP_NS ? 0 : sleep;
    }

    /**
     * Echo mode, default timing (before {@link #start}): be awake for each request when it is due, woken
     * {@code earlyNs} ahead of it ({@link ArrivalForecast}); 0 leaves the reader waiting in epoll_wait.
     */
    void forecastRequests(long earlyNs) {
        this.forecast = earlyNs > 0 ? new ArrivalForecast(earlyNs) : null;
    }

    void start() {
        thread.start();
    }

    /** Runs {@code command} on this reader's thread, between reads. */
    @Override
    public void execute(Runnable command) {
        commands.add(command);
        NativeUdp.eventFdWrite(wakeFd); // it may be waiting (a spinning reader drains the count in passing)
        LockSupport.unpark(thread); // or sleeping between reads
    }

    void setPaused(boolean paused) {
        this.paused = paused;
    }

    long stamped() {
        return stamped.get();
    }

    long unstamped() {
        return unstamped.get();
    }

    long coalesced() {
        return coalesced.get();
    }

    long forecasts() {
        return forecasts.get();
    }

    long errorQueuePurges() {
        return errorQueuePurges.get();
    }

    /** This reader's conversion of kernel stamps: the realtime steps it saw
     * ({@link RealtimeToMonotonic#takeReport}). */
    RealtimeToMonotonic clock() {
        return clock;
    }

    @Override
    public void run() {
        tuning.applyToCurrentThread();
        long sleptNs = 0;
        while (running) {
            if (readIntervalNs > 0 && !paused) {
                // Everything queued is read before a command runs: a step closes on what arrived before it did.
                sleptNs = readEverything(sleptNs);
            }
            for (Runnable c; (c = commands.poll()) != null; ) {
                c.run();
            }
            if (paused) {
                LockSupport.parkNanos(PAUSED_PARK_NS); // tests stall a receiver so its socket fills
                continue;
            }
            if (readIntervalNs > 0) {
                if (sleptNs > 0) {
                    LockSupport.parkNanos(sleptNs); // a command or a close unparks it
                } else {
                    readOnce(WAIT_NS); // more is queued (it returns at once), or the next datagram is read as it comes
                }
                continue;
            }
            if (forecast != null) {
                long wait = forecast.waitNs(System.nanoTime());
                readOnce(wait == ArrivalForecast.UNTIL_ARRIVAL ? WAIT_NS : Math.min(wait, WAIT_NS));
                continue;
            }
            readOnce(busy != null && busy.on() ? 0 : WAIT_NS);
        }
    }

    /** One read (waiting up to {@code timeoutNs} for a datagram); returns the datagrams it took. */
    private int readOnce(long timeoutNs) {
        int n = NativeUdp.readStampedNs(epfd, timeoutNs, slots, slotBytes, batch, meta);
        clock.readTaken(meta); // every call's samples, an empty one's too: they bracket any realtime step
        if (n > 0) {
            deliver(n);
        }
        return n;
    }

    /**
     * Reads without waiting until every socket is empty; returns how long to sleep next ({@link #nextSleepNs}),
     * given that the last sleep was {@code sleptNs}.
     */
    private long readEverything(long sleptNs) {
        long before = unstamped.get();
        long read = 0;
        for (int n; (n = readOnce(0)) > 0; ) {
            read += n;
        }
        return nextSleepNs(readIntervalNs, socketCapacity, read, sleptNs, unstamped.get() != before);
    }

    /** Accounts (and in echo mode answers) the {@code n} datagrams the last read returned. */
    private void deliver(int n) {
        long userNs = 0; // read once per read, and only when a datagram came without a kernel stamp
        for (int i = 0; i < n; i++) {
            int m = i * NativeUdp.META_BYTES;
            Socket s = sockets[meta.getInt(m + NativeUdp.META_TOKEN)];
            int length = meta.getInt(m + NativeUdp.META_LENGTH);
            if (length == NativeUdp.ERRQUEUE_DRAINED) {
                errorQueuePurges.lazySet(errorQueuePurges.get() + 1); // ICMP errors IP_RECVERR queued: not losses
                continue;
            }
            if (length < 0) {
                errors.record(s.flowIndex, new java.io.IOException(NativeUdp.describeErrno(-length)));
                continue;
            }
            // With UDP_GRO a slot holds the datagrams the kernel coalesced, each `segment` bytes but the last, all
            // with the one stamp of their arrival; else (segment 0) one datagram, an empty one too.
            int segment = meta.getInt(m + NativeUdp.META_SEGMENT);
            boolean truncated = segment == NativeUdp.SEGMENT_TRUNCATED || length > slotBytes;
            if (truncated) {
                // Cut to its slot (MSG_TRUNC), or a length the slot cannot hold: one datagram longer than any
                // message, read no further than its slot's header.
                length = slotBytes;
                segment = length;
            } else if (segment <= 0 || segment > length) {
                segment = length;
            }
            int datagrams = segment == 0 ? 1 : (length + segment - 1) / segment;
            if (s.onlyFrom != null && !s.onlyFrom.matches(meta, m)) {
                // the rare case: from someone other than the sender; each datagram of a coalesced read counts
                s.foreign.lazySet(s.foreign.get() + datagrams);
                continue;
            }
            if (s.classes != null) {
                int tos = meta.getInt(m + NativeUdp.META_TOS);
                int cls = tos < 0 ? UNREAD_CLASS : io.lossprobe.core.plan.Dscp.ofTos(tos);
                s.classes.lazySet(cls, s.classes.get(cls) + datagrams);
            }
            long realtimeNs = meta.getLong(m + NativeUdp.META_REALTIME_NS);
            boolean kernel = realtimeNs != NativeUdp.NO_STAMP;
            if (!kernel && userNs == 0) {
                userNs = System.nanoTime();
            }
            long arrivalNs = kernel ? clock.toMonotonic(realtimeNs) : userNs;
            int at = i * slotBytes;
            int off = 0;
            do {
                deliverOne(s, at + off, truncated ? slotBytes + 1 : Math.min(segment, length - off), arrivalNs, kernel,
                    m);
                off += segment;
            } while (off < length);
            AtomicLong source = kernel ? stamped : unstamped;
            source.lazySet(source.get() + datagrams);
            if (datagrams > 1) {
                coalesced.lazySet(coalesced.get() + datagrams);
            }
        }
    }

    /** One datagram of {@code length} bytes at {@code at} in the slots: accounted, and in echo mode answered. */
    private void deliverOne(Socket s, int at, int length, long arrivalNs, boolean kernel, int m) {
        boolean answer = length < MessageHeader.LENGTH
            ? s.accounting.onMessage(0, 0, 0, 0, 0, 0, length, arrivalNs, kernel)
            : s.accounting.onMessage(slots.getLong(at + MessageHeader.WORD0_OFFSET),
                slots.getLong(at + MessageHeader.WORD1_OFFSET), slots.getLong(at + MessageHeader.SEQUENCE_OFFSET),
                slots.getLong(at + MessageHeader.SEND_TIME_OFFSET),
                slots.getLong(at + MessageHeader.ACTUAL_SEND_TIME_OFFSET),
                slots.getLong(at + MessageHeader.TAG_OFFSET), length, arrivalNs, kernel);
        if (answer && s.echo) {
            reply(s, at, length, m);
            if (forecast != null && forecast.answered(arrivalNs)) {
                forecasts.lazySet(forecasts.get() + 1);
            }
        }
    }

    /** The request back to its flow's sender, kind and tag made again in place, sent at once. */
    private void reply(Socket s, int at, int length, int m) {
        int family = meta.getShort(m + NativeUdp.META_FAMILY);
        int port = meta.getShort(m + NativeUdp.META_PORT);
        long high = meta.getLong(m + NativeUdp.META_ADDR);
        long low = meta.getLong(m + NativeUdp.META_ADDR + 8);
        if (!s.pinned && (s.replyOnlyTo == null || s.replyOnlyTo.matches(meta, m))) {
            s.pinned = true;
            s.senderFamily = family;
            s.senderPort = port;
            s.senderHigh = high;
            s.senderLow = low;
        }
        long request = slots.getLong(at + MessageHeader.WORD0_OFFSET);
        if (!s.pinned || family != s.senderFamily || port != s.senderPort || high != s.senderHigh
            || low != s.senderLow) {
            s.replies.dropped(request);
            return;
        }
        long w0 = MessageHeader.replyOf(request);
        slots.putLong(at + MessageHeader.WORD0_OFFSET, w0);
        slots.putLong(at + MessageHeader.TAG_OFFSET, s.replies.tag(w0,
            slots.getLong(at + MessageHeader.WORD1_OFFSET), slots.getLong(at + MessageHeader.SEQUENCE_OFFSET),
            slots.getLong(at + MessageHeader.SEND_TIME_OFFSET),
            slots.getLong(at + MessageHeader.ACTUAL_SEND_TIME_OFFSET)));
        if (NativeUdp.replyTo(s.fd, slots, at, length, meta, m) < 0) {
            s.replies.dropped(request); // the socket's buffer is full (EAGAIN) or the sender is gone: reply loss
        } else {
            s.replies.sent(request);
        }
    }

    /** Stops the thread (bounded wait), then releases its descriptors; the sockets stay Netty's to close. */
    void close(long deadlineNs) {
        running = false;
        NativeUdp.eventFdWrite(wakeFd);
        LockSupport.unpark(thread);
        try {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!thread.isAlive()) { // a thread still reading must not find its descriptors reused
            NativeUdp.close(wakeFd);
            NativeUdp.close(epfd);
        }
    }

    /** One flow's socket as this reader sees it; the sender pin is the reader thread's alone. */
    static final class Socket {
        final FlowReceiver accounting;
        final int fd;
        final int flowIndex;
        final boolean echo;
        final HostKey onlyFrom;
        final HostKey replyOnlyTo;
        final AtomicLong foreign;
        /** Echo mode: the flow's reply counts (written by this reader only); null otherwise. */
        final EchoReplies.Flow replies;
        /**
         * With {@code --dscp}: datagrams by the DSCP they arrived with (index 0-63), {@link #UNREAD_CLASS} for those
         * without one; written by the reader only. Null: the class is not read.
         */
        java.util.concurrent.atomic.AtomicLongArray classes;
        /** The socket is AF_INET6 (it is asked for IPV6_RECVTCLASS too). */
        boolean ipv6;
        /** The flow's sender as its first answered request came (family, port, address): replies go there only. */
        private boolean pinned;
        private int senderFamily;
        private int senderPort;
        private long senderHigh;
        private long senderLow;

        /**
         * @param onlyFrom    the only host data is taken from (between hosts), or null for any
         * @param replyOnlyTo the only host replies may go to (between hosts), or null
         * @param foreign     where datagrams from another host are counted (read by the engine)
         * @param replies     echo mode: the flow's reply counts; null otherwise
         */
        Socket(FlowReceiver accounting, int fd, int flowIndex, InetAddress onlyFrom, InetAddress replyOnlyTo,
               AtomicLong foreign, EchoReplies.Flow replies) {
            this.accounting = accounting;
            this.fd = fd;
            this.flowIndex = flowIndex;
            this.echo = replies != null;
            this.replies = replies;
            this.onlyFrom = onlyFrom == null ? null : new HostKey(onlyFrom);
            this.replyOnlyTo = replyOnlyTo == null ? null : new HostKey(replyOnlyTo);
            this.foreign = foreign;
        }
    }

    /** Which of {@code threads} readers reads flow {@code flow} (the one rule: {@link #startAll} and step control). */
    static int readerOf(int flow, int threads) {
        return flow % threads;
    }

    /**
     * The stamped readers: flow i read by reader {@link #readerOf}, each started and tuned before this returns; each
     * slot {@code slotBytes} (a message and a byte, or {@link UdpReceiver#GRO_SLOT_BYTES} with UDP_GRO), with room
     * for UDP_GRO's slots later when {@code groLater}; with {@code classes} (by flow; null: not read) each
     * arrival's traffic class is read and counted there; with {@code echoWakeEarlyNs} above 0 (an echo responder in
     * the default timing) each reader forecasts its requests ({@link #forecastRequests}).
     */
    static List<StampedReader> startAll(ReceiverSpec spec, List<Channel> channels, int threads,
                                        InetAddress onlyFrom, InetAddress replyOnlyTo, EchoReplies replies,
                                        LoopErrors errors, AtomicLong[] foreign, ThreadTuning tuning, BusyPoll busy,
                                        int slotBytes, boolean groLater,
                                        java.util.concurrent.atomic.AtomicLongArray[] classes,
                                        long readIntervalNs, long socketCapacity, long echoWakeEarlyNs)
        throws Exception {
        List<List<StampedReader.Socket>> byReader = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            byReader.add(new ArrayList<>());
        }
        for (int i = 0; i < channels.size(); i++) {
            int fd = ((EpollDatagramChannel) channels.get(i)).fd().intValue();
            StampedReader.Socket socket = new StampedReader.Socket(spec.flows()[i], fd, i, onlyFrom,
                replyOnlyTo, foreign[i], replies == null ? null : replies.flow(i));
            socket.classes = classes == null ? null : classes[i];
            socket.ipv6 = ((java.net.InetSocketAddress) channels.get(i).localAddress()).getAddress()
                instanceof java.net.Inet6Address;
            byReader.get(readerOf(i, threads)).add(socket);
        }
        List<StampedReader> readers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            StampedReader r = new StampedReader("lossprobe-udp-rx-stamped-" + t,
                byReader.get(t).toArray(new StampedReader.Socket[0]), busy, slotBytes, groLater, errors, tuning);
            readers.add(r);
            r.readEvery(readIntervalNs, socketCapacity);
            r.forecastRequests(echoWakeEarlyNs);
            r.start();
        }
        for (StampedReader r : readers) {
            CompletableFuture.runAsync(() -> { }, r).get(30, TimeUnit.SECONDS); // it runs
        }
        return readers;
    }
}
