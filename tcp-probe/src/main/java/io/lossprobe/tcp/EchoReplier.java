package io.lossprobe.tcp;

import io.lossprobe.core.wire.MessageHeader;
import io.lossprobe.netty.ByteBufHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Echo mode on the receiving side of one connection: each message the flow counted first-time is written back
 * as the same header with kind ECHO, padded to the message length, batched per read and flushed when the read
 * completes. While the requester does not take the replies (the channel is not writable), reading stops, so
 * replies never queue without bound: back pressure reaches the requester as TCP flow control.
 */
final class EchoReplier extends ChannelInboundHandlerAdapter {
    private static final int BATCH_BYTES = 64 * 1024;
    private final int messageLength;
    private final io.lossprobe.core.accounting.FlowReceiver flow;
    private ChannelHandlerContext ctx;
    private ByteBuf batch;

    /** @param flow the flow's accounting, whose key tags the replies */
    EchoReplier(int messageLength, io.lossprobe.core.accounting.FlowReceiver flow) {
        this.messageLength = messageLength;
        this.flow = flow;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Queues the reply to a request (called by the framer's sink, on this channel's event loop). */
    void reply(long word0, long word1, long sequence, long sendTimeNs, long actualSendNs) {
        if (batch == null) {
            batch = ctx.alloc().directBuffer(Math.max(BATCH_BYTES, messageLength));
        }
        if (batch.writableBytes() < messageLength) {
            ctx.write(batch, ctx.voidPromise());
            batch = ctx.alloc().directBuffer(Math.max(BATCH_BYTES, messageLength));
        }
        long echo = MessageHeader.replyOf(word0);
        ByteBufHeaders.writeMessage(batch, echo, word1, sequence, sendTimeNs, actualSendNs,
            flow.replyTag(echo, word1, sequence, sendTimeNs, actualSendNs), messageLength);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (batch != null) {
            ctx.writeAndFlush(batch, ctx.voidPromise());
            batch = null;
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
            batch.release();
            batch = null;
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A failed reply write ends in the connection's close; the replies' counts show what it cost.
        ctx.close();
    }
}
