package io.lossprobe.udp;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.transport.LoopErrors;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SendFailureListener;
import io.lossprobe.core.wire.MessageHeader;
import io.lossprobe.netty.ByteBufHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelPromise;
import io.netty.channel.unix.SegmentedDatagramPacket;
import java.net.InetSocketAddress;

/**
 * Writes one flow's messages. With GSO (Linux UDP_SEGMENT through Netty epoll) the messages of one batch are
 * laid end to end in one pooled buffer and leave as one {@code sendmmsg} entry that the kernel cuts into one
 * datagram per message, so the send path and the pooled allocation are paid once per batch, not once per
 * message. On loopback the receiving socket (without UDP_GRO) gets the segments as separate datagrams, so its
 * drop counter still counts datagrams. Without GSO each message is its own buffer and datagram.
 *
 * <p>Errors of an accepted write arrive later, through the write's {@link BatchPromise} (during the flush, on
 * this event loop): every message of that write failed, and its sequence range is reported to the step's
 * failure ledger. A batch holds consecutive wire sequences only, so its range is exact. Nothing else counts: an
 * error surfacing on a read (an ICMP port unreachable, say) says nothing about which message, if any, was not
 * sent.
 *
 * <p>With IP_RECVERR a drop at the host's own egress queue fails its write (ENOBUFS): with GSO the whole
 * super-packet, which the queue dropped whole. A {@code sendmmsg} that fails part-way returns the count sent
 * before the failure; Netty then sends the rest again starting with the refused entry, so a refused datagram
 * is tried once more and fails its promise only if refused again. IP_RECVERR also queues every ICMP error on
 * the socket's error queue, which Netty never reads; its level-triggered epoll would then wake this loop
 * without end (EPOLLERR), so a wake-up that read nothing empties the queue ({@link #purgeErrorQueue}).
 */
final class DatagramWriter extends ChannelInboundHandlerAdapter implements MessageWriter {
    private final int flow;
    private final int size;
    private final int messagesPerBuffer;
    private final SendFailureListener failures;
    private final ChannelFutureListener reportBatchFailure = this::reportBatchFailure;
    private Channel channel;
    private InetSocketAddress localAddress;
    private ByteBuf batch;
    private int inBatch;
    private long batchFirst;
    private long batchWord1;
    private boolean batchIsData;
    private final boolean recvErr;
    private final LoopErrors errors;
    private int readsSinceWakeUp;
    /** Written on the event loop, read by the engine after a step. */
    private volatile long errorQueuePurges;

    /**
     * @param messagesPerBuffer messages per GSO send; 1 sends one datagram per write (no GSO)
     * @param recvErr           IP_RECVERR is on for this flow's socket
     */
    DatagramWriter(int flow, int size, int messagesPerBuffer, SendFailureListener failures, boolean recvErr,
                   LoopErrors errors) {
        this.flow = flow;
        this.errors = errors;
        this.size = size;
        this.messagesPerBuffer = messagesPerBuffer;
        this.failures = failures;
        this.recvErr = recvErr;
    }

    /** Times this socket's error queue was emptied; read by the engine after a step. */
    long errorQueuePurges() {
        return errorQueuePurges;
    }

    void attach(Channel channel) {
        this.channel = channel;
        this.localAddress = (InetSocketAddress) channel.localAddress();
    }

    @Override
    public int write(long word0, long word1, long sequence, long intendedNs, long actualNs, long tag) {
        if (batch != null && (sequence != batchFirst + inBatch || word1 != batchWord1)) {
            emit(); // a batch is one run of consecutive sequences, so a failure names exactly its messages
        }
        if (batch == null) {
            // The batch under construction is bounded (one buffer), so checking here bounds the memory queued.
            if (!channel.isWritable()) {
                return BLOCKED;
            }
            batch = channel.alloc().directBuffer(size * messagesPerBuffer);
            batchFirst = sequence;
            batchWord1 = word1;
            batchIsData = MessageHeader.kind(word0) == MessageHeader.KIND_DATA;
        }
        // The header's length: the plan's size, or with a size mix this message's (a batch is of one size).
        ByteBufHeaders.writeMessage(batch, word0, word1, sequence, intendedNs, actualNs, tag,
            MessageHeader.length(word1));
        if (++inBatch == messagesPerBuffer) {
            emit();
        }
        return ACCEPTED;
    }

    private void emit() {
        ByteBuf b = batch;
        int messages = inBatch;
        batch = null;
        inBatch = 0;
        // No recipient: the socket is connected, so the kernel uses its cached route (sender is a placeholder
        // that Netty's envelope requires when the recipient is null).
        Object packet = messages == 1 ? b
            : new SegmentedDatagramPacket(b, MessageHeader.length(batchWord1), null, localAddress);
        ChannelPromise promise = batchIsData
            ? new BatchPromise(channel, MessageHeader.step(batchWord1), batchFirst, messages)
                .addListener(reportBatchFailure)
            : channel.voidPromise(); // a warm-up message that fails is no one's loss
        channel.write(packet, promise);
    }

    @Override
    public void flush() {
        if (batch != null) {
            emit();
        }
        channel.flush();
    }

    private void reportBatchFailure(ChannelFuture future) {
        if (!future.isSuccess()) {
            BatchPromise b = (BatchPromise) future;
            failures.failed(flow, b.step, b.firstSequence, b.messages);
        }
    }

    /**
     * Not a send failure: those fail their write's promise. Counting anything else as one (an ICMP error
     * surfacing on a read, say) would move a message that was sent, and maybe received, to sendFailed. It is
     * counted as the flow's socket error and the step says so in words.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        errors.record(flow, cause);
    }

    /** Echo mode: the flow's replies, which arrive on this connected socket. */
    FlowReceiver replies;

    /** Netty calls this after every read attempt, also when the wake-up was EPOLLERR and nothing was read. */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (recvErr && readsSinceWakeUp == 0) {
            purgeErrorQueue();
        }
        readsSinceWakeUp = 0;
    }

    /**
     * Linux empties a socket's error queue when IP_RECVERR is turned off (do_ip_setsockopt); it is turned on
     * again at once. Both calls run on the event loop, the only thread that sends on this socket, so no send
     * happens in between and no ENOBUFS goes unreported.
     */
    private void purgeErrorQueue() {
        channel.config().setOption(UdpSender.IP_RECVERR, 0);
        channel.config().setOption(UdpSender.IP_RECVERR, 1);
        errorQueuePurges = errorQueuePurges + 1; // one writer: the event loop
    }

    /** Waiting for the receiver's punch ({@code SenderSpec.punched}): where it goes; else null. */
    volatile PunchedDestinations punches;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        readsSinceWakeUp++;
        ByteBufHolder holder = (ByteBufHolder) msg;
        try {
            PunchedDestinations p = punches;
            if (p != null && msg instanceof io.netty.channel.socket.DatagramPacket d) {
                ByteBuf content = d.content();
                byte[] bytes = new byte[Math.min(content.readableBytes(), io.lossprobe.core.wire.Punch.BYTES + 1)];
                content.getBytes(content.readerIndex(), bytes);
                p.offer(flow, bytes, bytes.length, d.sender());
            }
            if (replies != null) {
                DatagramHandler.deliver(replies, holder.content(), System.nanoTime());
            }
        } finally {
            holder.release();
        }
    }

    /** A write's promise that knows which messages the write carries. */
    private static final class BatchPromise extends DefaultChannelPromise {
        final int step;
        final long firstSequence;
        final int messages;

        BatchPromise(Channel channel, int step, long firstSequence, int messages) {
            super(channel, channel.eventLoop());
            this.step = step;
            this.firstSequence = firstSequence;
            this.messages = messages;
        }
    }
}
