package io.lossprobe.tcp;

import io.lossprobe.core.wire.MessageHeader;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Cuts one connection's byte stream into messages by the length in their header, and never guesses.
 *
 * <ul>
 *   <li>A read that ends inside a message is not a lost message: the bytes wait in a carry buffer of one message
 *   and the next read completes them. Whole messages are read in place from Netty's read buffer, four
 *   {@code getLong}s each, with no copy and no object per message.</li>
 *   <li>A header with the wrong magic, version or length (one of the plan's: its size, or its size mix's) means
 *   the stream can no longer be framed: it is passed once to the sink, whose validation counts it corrupt, and
 *   the connection is closed. No resynchronising by searching for the next magic: a guess could misframe.</li>
 *   <li>Bytes of an incomplete message at the end of the stream are counted as truncated; the message was never
 *   delivered, so the sequence accounting counts it lost.</li>
 * </ul>
 *
 * One framer per connection; it runs on the connection's event loop.
 */
final class MessageFramer extends ChannelInboundHandlerAdapter {
    private final MessageSink sink;
    /** The longest message: what the carry buffer holds. */
    private final int messageLength;
    /** The lengths a message may have: the plan's size, or a size mix's sizes (sorted). */
    private final int[] lengths;
    private final ConnectionStats stats;
    /** Less than one message carried from one read to the next; its header, when complete, is already checked. */
    private ByteBuf carry;
    private boolean rejected;

    MessageFramer(MessageSink sink, int messageLength, ConnectionStats stats) {
        this(sink, new int[] {messageLength}, stats);
    }

    /** A framer of messages of any of {@code lengths} (a size mix's sizes), each framed by its header's length. */
    MessageFramer(MessageSink sink, int[] lengths, ConnectionStats stats) {
        int[] sorted = lengths.clone();
        java.util.Arrays.sort(sorted);
        if (sorted.length == 0 || sorted[0] < MessageHeader.LENGTH
            || sorted[sorted.length - 1] > MessageHeader.MAX_MESSAGE_LENGTH) {
            throw new IllegalArgumentException("message length out of range: " + java.util.Arrays.toString(lengths));
        }
        this.sink = sink;
        this.lengths = sorted;
        this.messageLength = sorted[sorted.length - 1];
        this.stats = stats;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        carry = ctx.alloc().heapBuffer(messageLength, messageLength);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (carry != null) {
            carry.release();
            carry = null;
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        try {
            if (!rejected) {
                decode(ctx, in, System.nanoTime());
            }
        } finally {
            in.release();
        }
    }

    private void decode(ChannelHandlerContext ctx, ByteBuf in, long arrivalNs) {
        if (carry.isReadable() && !completeCarried(ctx, in, arrivalNs)) {
            return;
        }
        while (in.readableBytes() >= MessageHeader.LENGTH) {
            int at = in.readerIndex();
            long word0 = in.getLong(at + MessageHeader.WORD0_OFFSET);
            long word1 = in.getLong(at + MessageHeader.WORD1_OFFSET);
            if (!canFrame(word0, word1)) {
                reject(ctx, in, at, arrivalNs);
                return;
            }
            int length = MessageHeader.length(word1);
            if (in.readableBytes() < length) {
                break;
            }
            deliver(in, at, length, arrivalNs);
            in.skipBytes(length);
        }
        carry.writeBytes(in); // the start of the next message: less than one message, its header checked if whole
    }

    /**
     * Feeds the carried message from {@code in}; true when it was completed and delivered, false when it still
     * needs bytes or the stream was rejected.
     */
    private boolean completeCarried(ChannelHandlerContext ctx, ByteBuf in, long arrivalNs) {
        if (carry.readableBytes() < MessageHeader.LENGTH) {
            carry.writeBytes(in, Math.min(MessageHeader.LENGTH - carry.readableBytes(), in.readableBytes()));
            if (carry.readableBytes() < MessageHeader.LENGTH) {
                return false;
            }
            int at = carry.readerIndex();
            long word0 = carry.getLong(at + MessageHeader.WORD0_OFFSET);
            long word1 = carry.getLong(at + MessageHeader.WORD1_OFFSET);
            if (!canFrame(word0, word1)) {
                reject(ctx, carry, at, arrivalNs);
                return false;
            }
        }
        int length = MessageHeader.length(carry.getLong(carry.readerIndex() + MessageHeader.WORD1_OFFSET));
        carry.writeBytes(in, Math.min(length - carry.readableBytes(), in.readableBytes()));
        if (carry.readableBytes() < length) {
            return false;
        }
        deliver(carry, carry.readerIndex(), length, arrivalNs);
        carry.clear();
        return true;
    }

    /** Hands the message whose header starts at {@code at} to the sink: the one place the header is read. */
    private void deliver(ByteBuf b, int at, int length, long arrivalNs) {
        sink.onMessage(b.getLong(at + MessageHeader.WORD0_OFFSET), b.getLong(at + MessageHeader.WORD1_OFFSET),
            b.getLong(at + MessageHeader.SEQUENCE_OFFSET), b.getLong(at + MessageHeader.SEND_TIME_OFFSET),
            b.getLong(at + MessageHeader.ACTUAL_SEND_TIME_OFFSET), b.getLong(at + MessageHeader.TAG_OFFSET), length,
            arrivalNs);
    }

    /**
     * Framing needs only magic, version and a length the plan has; run, flow, step and kind (and, with a size mix,
     * whether the length is the one the message's sequence number has) are the sink's to check.
     */
    private boolean canFrame(long word0, long word1) {
        return MessageHeader.isLossprobe(word0)
            && java.util.Arrays.binarySearch(lengths, MessageHeader.length(word1)) >= 0;
    }

    /**
     * The stream is not lossprobe messages of this plan's length: report the bad header once (its magic, version
     * or length fails the sink's validation, so it counts as corrupt) and close the connection.
     */
    private void reject(ChannelHandlerContext ctx, ByteBuf b, int at, long arrivalNs) {
        rejected = true;
        stats.garbageCloses++;
        deliver(b, at, MessageHeader.length(b.getLong(at + MessageHeader.WORD1_OFFSET)), arrivalNs);
        carry.clear();
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (carry != null && carry.isReadable()) {
            stats.truncatedBytes += carry.readableBytes();
            carry.clear();
        }
        stats.closed++;
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A reset or other I/O error ends this connection only; the flow's counts show what it cost.
        stats.errors++;
        stats.onError.accept(cause);
        ctx.close();
    }

    boolean rejected() {
        return rejected;
    }
}
