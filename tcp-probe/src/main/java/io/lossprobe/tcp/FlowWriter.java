package io.lossprobe.tcp;

import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SendFailureListener;
import io.lossprobe.core.wire.MessageHeader;
import io.lossprobe.netty.ByteBufHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.DefaultChannelPromise;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.Map;

/**
 * One flow's sending side: appends each message to a batch buffer and writes the batch to the connection on
 * {@link #flush} (one write per flow per send-loop cycle), so a cycle's messages leave in one syscall.
 *
 * <p>Back pressure: when Netty's queue for the connection is above the high water mark the writer answers
 * {@link #BLOCKED}; the send loop retries later and the flow falls {@code behind}. Netty's queue is thus bounded
 * by the high water mark plus one batch, and the kernel's by its socket buffer.
 *
 * <p>A dead connection (reset, broken pipe, closed by the peer) makes every later message {@link #REFUSED}, so
 * the flow's shortfall shows as {@code sendFailed}, not as a sender that could not keep up; the other flows are
 * untouched. Messages accepted but not wholly handed to the kernel when it died are reported to the step's failure
 * ledger by sequence range (a batch holds consecutive wire sequences of one step, so the range is exact);
 * messages the kernel had taken and lost with the connection count as lost. The sender reconnects the flow at
 * the next step.
 *
 * <p>Everything runs on the sender's event loop, which also runs the send loop.
 */
final class FlowWriter implements MessageWriter, ChannelFutureListener {

    private static final int BATCH_BYTES = 64 * 1024;

    private final int flow;
    private final SendFailureListener sendFailures;
    private final int messageLength;
    private final int batchCapacity;
    private final TcpInfoCounters tcp = new TcpInfoCounters();

    private Channel channel;
    /** The current connection ended (or never came up); every write is refused until a reconnect. */
    private boolean down;
    /** The first error seen on the current connection: the cause reported when it ends. */
    private Throwable firstError;
    private boolean closing;
    private ByteBuf batch;
    /** The batch's first wire sequence and header word 1 (run, step); data or warm-up. */
    private long batchFirst;
    private long batchWord1;
    private boolean batchIsData;
    private boolean blocked;

    // Since the last report.
    private long blockedEpisodes;
    private long maxQueuedBytes;
    private long failures;
    private long reconnects;
    private final long[] failuresByCause = new long[FailureCause.values().length];

    FlowWriter(int flow, int messageLength, SendFailureListener failures) {
        this.flow = flow;
        this.sendFailures = failures;
        this.messageLength = messageLength;
        this.batchCapacity = Math.max(messageLength, BATCH_BYTES / messageLength * messageLength);
    }

    /** Most bytes one unwritten batch holds: Netty's queue stays below the high water mark plus this. */
    int batchCapacity() {
        return batchCapacity;
    }

    @Override
    public int write(long word0, long word1, long sequence, long intendedNs, long actualNs, long tag) {
        if (!channel.isWritable()) {
            return notWritable();
        }
        blocked = false;
        // A batch is one run of consecutive sequences of one step and one size (the header's length: the plan's
        // size, or with a size mix each message's own).
        int length = MessageHeader.length(word1);
        if (batch != null && (word1 != batchWord1 || sequence != batchFirst + batch.readableBytes() / length)) {
            writeBatch();
        }
        if (batch == null) {
            batch = channel.alloc().directBuffer(Math.min(batchCapacity, 16 * messageLength), batchCapacity);
            batchFirst = sequence;
            batchWord1 = word1;
            batchIsData = MessageHeader.kind(word0) == MessageHeader.KIND_DATA;
        }
        ByteBufHeaders.writeMessage(batch, word0, word1, sequence, intendedNs, actualNs, tag, length);
        if (batch.maxWritableBytes() < messageLength) {
            writeBatch();
        }
        return ACCEPTED;
    }

    /** The rare case: above the water mark (BLOCKED, count the episode) or the connection is gone (REFUSED). */
    private int notWritable() {
        if (down || !channel.isActive()) {
            return REFUSED;
        }
        if (!blocked) {
            blocked = true;
            blockedEpisodes++;
        }
        return BLOCKED;
    }

    @Override
    public void flush() {
        if (batch != null) {
            writeBatch();
        }
        channel.flush();
    }

    private void writeBatch() {
        ByteBuf b = batch;
        batch = null;
        int length = MessageHeader.length(batchWord1);
        BatchPromise promise = new BatchPromise(channel, b, batchIsData, MessageHeader.step(batchWord1), batchFirst,
            b.readableBytes() / length, length);
        promise.addListener(this);
        channel.write(b, promise);
        ChannelOutboundBuffer queue = channel.unsafe().outboundBuffer();
        if (queue != null) {
            long queued = queue.totalPendingWriteBytes();
            if (queued > maxQueuedBytes) {
                maxQueuedBytes = queued;
            }
        }
    }

    /** A batch was written to the kernel, or failed with the connection. */
    @Override
    public void operationComplete(ChannelFuture future) {
        BatchPromise promise = (BatchPromise) future;
        ByteBuf b = promise.batch;
        if (!future.isSuccess()) {
            // Netty advances the reader index past what the kernel took, so what remains never left: the batch's
            // last whole messages, and the one cut in half, which the receiver can never complete.
            int unsent = (b.readableBytes() + promise.length - 1) / promise.length;
            if (promise.data && unsent > 0) {
                sendFailures.failed(flow, promise.step, promise.first + promise.messages - unsent, unsent);
            }
            onError(promise.channel(), future.cause());
        }
        b.release();
    }

    /** Uses {@code ch} from now on (the first connection, or a reconnect). */
    void attach(Channel ch, boolean reconnect) {
        tcp.connectionReplaced(channel);
        channel = ch;
        down = false;
        firstError = null;
        blocked = false;
        if (reconnect) {
            reconnects++;
        }
        tcp.sample(channel);
    }

    /** A connect attempt failed: the flow stays down until the next step tries again. */
    void connectFailed(Throwable cause) {
        failures++;
        failuresByCause[FailureCause.of(cause).ordinal()]++;
        noteFailure("could not connect", cause);
    }

    /** The step's failures in words, for the step's warnings; cleared by {@link #report()}. */
    java.util.List<String> notes() {
        return java.util.List.copyOf(notes);
    }

    private final java.util.List<String> notes = new java.util.ArrayList<>();

    private void noteFailure(String what, Throwable cause) {
        if (notes.size() < 4) { // a flapping connection must not flood the result
            String why = cause == null ? "closed by the peer" : FailureCause.of(cause).name().toLowerCase(
                java.util.Locale.ROOT).replace('_', ' ') + " (" + cause.getMessage() + ")";
            notes.add(what + ": " + why);
        }
    }

    boolean isDown() {
        return down || channel == null || !channel.isActive();
    }

    Channel channel() {
        return channel;
    }

    private void onError(Channel ch, Throwable cause) {
        if (ch == channel && firstError == null && !down) {
            firstError = cause;
            tcp.sample(channel); // the socket may still be open: keep the retransmits it made before it died
        }
    }

    private void onInactive(Channel ch) {
        if (ch != channel || down) {
            return;
        }
        down = true;
        if (!closing) {
            failures++;
            failuresByCause[FailureCause.of(firstError).ordinal()]++;
            noteFailure("connection ended mid-step, its later messages count as sendFailed", firstError);
        }
        if (batch != null) {
            // Accepted, never written: the connection went before the flush.
            if (batchIsData) {
                sendFailures.failed(flow, MessageHeader.step(batchWord1), batchFirst,
                    batch.readableBytes() / MessageHeader.length(batchWord1));
            }
            batch.release();
            batch = null;
        }
    }

    void closing() {
        closing = true;
    }

    /** The window begins: see {@link TcpInfoCounters#markWindowStart}. */
    void markWindowStart() {
        tcp.markWindowStart(channel, down);
    }

    /**
     * True once everything written on the live connection is acknowledged (nothing queued in Netty, nothing
     * unacknowledged in the kernel): its retransmission count cannot move for this step any more. A dead
     * connection is settled. On the event loop.
     */
    boolean settled() {
        if (isDown() || !(channel instanceof EpollSocketChannel epoll)) {
            return true;
        }
        ChannelOutboundBuffer queue = channel.unsafe().outboundBuffer();
        if (queue != null && queue.totalPendingWriteBytes() > 0) {
            return false;
        }
        return tcp.allAcknowledged(epoll);
    }

    /**
     * This flow's counters since the last report, then starts over: TCP_INFO's ({@link TcpInfoCounters#reportInto},
     * epoll only), the connection failures by cause, reconnects and back pressure.
     */
    Map<String, Long> report() {
        if (!down) {
            tcp.sample(channel);
        }
        Map<String, Long> out = new java.util.HashMap<>();
        tcp.reportInto(out);
        out.put(TcpCounter.CONNECTION_FAILURES.key, failures);
        for (FailureCause c : FailureCause.values()) {
            if (failuresByCause[c.ordinal()] > 0) {
                out.put(c.key, failuresByCause[c.ordinal()]);
            }
        }
        out.put(TcpCounter.RECONNECTS.key, reconnects);
        out.put(TcpCounter.WRITE_BLOCKED_EPISODES.key, blockedEpisodes);
        out.put(TcpCounter.MAX_QUEUED_BYTES.key, maxQueuedBytes);
        failures = 0;
        java.util.Arrays.fill(failuresByCause, 0);
        reconnects = 0;
        blockedEpisodes = 0;
        maxQueuedBytes = 0;
        notes.clear();
        return out;
    }

    /**
     * Per connection: tells the writer how its connection ends. The receiver never writes, so reads are dropped.
     *
     * @param forwardReads true in echo mode: replies read from the connection go on to the reply framer
     */
    ChannelInboundHandlerAdapter events(boolean forwardReads) {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (forwardReads) {
                    ctx.fireChannelRead(msg);
                } else {
                    ReferenceCountUtil.release(msg);
                }
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                onError(ctx.channel(), cause);
                ctx.close();
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                onInactive(ctx.channel());
            }
        };
    }

    /**
     * One batch's promise: keeps the batch (retained) so a failure can tell how much of it never left, and which
     * sequences those were.
     */
    private static final class BatchPromise extends DefaultChannelPromise {
        final ByteBuf batch;
        final boolean data;
        final int step;
        final long first;
        final int messages;
        /** Bytes per message of the batch (one size per batch). */
        final int length;

        BatchPromise(Channel channel, ByteBuf batch, boolean data, int step, long first, int messages, int length) {
            super(channel);
            this.batch = batch.retain();
            this.data = data;
            this.step = step;
            this.first = first;
            this.messages = messages;
            this.length = length;
        }
    }
}
