package io.lossprobe.tcp;

import io.lossprobe.core.transport.EchoReplies;
import io.lossprobe.core.wire.MessageHeader;
import io.lossprobe.netty.ByteBufHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Echo mode on the receiving side of one connection: each message the flow counted first-time is written back
 * as the same header with kind ECHO, padded to the message length, batched per read and flushed when the read
 * completes. While the requester does not take the replies (the channel is not writable), reading stops, so
 * replies never queue without bound: back pressure reaches the requester as TCP flow control.
 *
 * <p>A batch's replies count as sent in {@link EchoReplies} once its write succeeded; a batch whose write failed,
 * or that was never written because the connection ended first, counts as dropped (reply loss at the responder).
 */
final class EchoReplier extends ChannelInboundHandlerAdapter {
    private static final int BATCH_BYTES = 64 * 1024;
    private final EchoReplies.Flow replies;
    private ChannelHandlerContext ctx;
    private ByteBuf batch;
    /** Counted replies (warm-ups apart) in {@link #batch}. */
    private long batchCounted;

    /** @param replies the flow's replies: their tags, and counts written on this channel's event loop */
    EchoReplier(EchoReplies.Flow replies) {
        this.replies = replies;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Queues the reply to a request (called by the framer's sink, on this channel's event loop). */
    void reply(long word0, long word1, long sequence, long sendTimeNs, long actualSendNs) {
        int length = MessageHeader.length(word1); // the run's message size: the accounting accepted the request
        if (batch != null && batch.writableBytes() < length) {
            writeBatch(false);
        }
        if (batch == null) {
            batch = ctx.alloc().directBuffer(Math.max(BATCH_BYTES, length));
        }
        long echo = MessageHeader.replyOf(word0);
        ByteBufHeaders.writeMessage(batch, echo, word1, sequence, sendTimeNs, actualSendNs,
            replies.tag(echo, word1, sequence, sendTimeNs, actualSendNs), length);
        batchCounted += MessageHeader.isWarmup(word0) ? 0 : 1;
    }

    /**
     * Writes the batch; its replies count as sent when the write succeeds, as dropped when it fails (which also
     * ends the connection, as any write failure does).
     */
    private void writeBatch(boolean flush) {
        long counted = batchCounted;
        ChannelFutureListener outcome = f -> {
            if (f.isSuccess()) {
                replies.sentCounted(counted);
            } else {
                replies.droppedCounted(counted);
                f.channel().close();
            }
        };
        if (flush) {
            ctx.writeAndFlush(batch).addListener(outcome);
        } else {
            ctx.write(batch).addListener(outcome);
        }
        batch = null;
        batchCounted = 0;
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (batch != null) {
            writeBatch(true);
        }
        if (!ctx.channel().isWritable()) {
            ctx.channel().config().setAutoRead(false);
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            ctx.channel().config().setAutoRead(true);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (batch != null) {
            replies.droppedCounted(batchCounted); // the connection ended before the batch was written
            batch.release();
            batch = null;
            batchCounted = 0;
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // An I/O error ends the connection; replies not written by then count as dropped.
        ctx.close();
    }
}
