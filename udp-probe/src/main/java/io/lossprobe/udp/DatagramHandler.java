package io.lossprobe.udp;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.transport.EchoReplies;
import io.lossprobe.core.transport.LoopErrors;
import io.lossprobe.core.wire.MessageHeader;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Netty's read path for one flow's socket: hands each datagram's header words to the flow's accounting and, in
 * echo mode, answers it. With epoll the clock is read once per read (one recvmmsg): every datagram of it was
 * already queued when the syscall returned, so one timestamp serves them all and saves a clock read per message.
 * NIO reads one datagram per syscall, several per read, so there the clock is read per datagram.
 */
final class DatagramHandler extends ChannelInboundHandlerAdapter {
    private final FlowReceiver flow;
    private final boolean clockPerRead;
    /** Echo mode: the flow's reply counts; null when not answering. */
    private final EchoReplies.Flow replies;
    private final InetAddress onlyFrom;
    private final InetAddress replyOnlyTo;
    /** Echo mode: the flow's sender, pinned at its first verified request; replies go there and only there. */
    private InetSocketAddress sender;
    /** Datagrams from an address other than the flow's sender: written on the receive thread only. */
    private final AtomicLong foreign;
    private final LoopErrors errors;
    private final int flowIndex;
    private long batchArrivalNs;
    private boolean haveBatchTime;
    private boolean repliesPending;

    /**
     * @param clockPerRead one timestamp per read (recvmmsg); false reads the clock for every datagram (NIO)
     * @param onlyFrom     the only address data is taken from (between hosts), or null for any
     * @param replies      echo mode: answer each accepted request to its source and count the replies here; null:
     *                     no replies
     */
    DatagramHandler(FlowReceiver flow, boolean clockPerRead, InetAddress onlyFrom, InetAddress replyOnlyTo,
            EchoReplies.Flow replies, LoopErrors errors, int flowIndex, AtomicLong foreign) {
        this.errors = errors;
        this.foreign = foreign;
        this.flowIndex = flowIndex;
        this.onlyFrom = onlyFrom;
        this.replyOnlyTo = replyOnlyTo;
        this.flow = flow;
        this.clockPerRead = clockPerRead;
        this.replies = replies;
    }

    /**
     * Echo mode: the request back to the flow's sender, kind ECHO and tagged again, flushed when the read ends.
     * A verified request from another address or port (a captured one replayed with a forged source) is not
     * answered: the responder never sends to an address its sender did not send from.
     */
    private void reply(ChannelHandlerContext ctx, DatagramPacket request) {
        InetSocketAddress from = request.sender();
        if (sender == null && (replyOnlyTo == null || replyOnlyTo.equals(from.getAddress()))) {
            sender = from;
        }
        ByteBuf b = request.content();
        int at = b.readerIndex();
        long requestWord0 = b.getLong(at + MessageHeader.WORD0_OFFSET);
        if (!ctx.channel().isWritable() || !from.equals(sender)) {
            replies.dropped(requestWord0);
            return;
        }
        ByteBuf r = ctx.alloc().directBuffer(b.readableBytes(), b.readableBytes()).writeBytes(b, at,
            b.readableBytes());
        long w0 = MessageHeader.replyOf(requestWord0);
        r.setLong(MessageHeader.WORD0_OFFSET, w0);
        r.setLong(MessageHeader.TAG_OFFSET, replies.tag(w0, r.getLong(MessageHeader.WORD1_OFFSET),
            r.getLong(MessageHeader.SEQUENCE_OFFSET), r.getLong(MessageHeader.SEND_TIME_OFFSET),
            r.getLong(MessageHeader.ACTUAL_SEND_TIME_OFFSET)));
        // Counted when the socket took it, or dropped (and said in the step's notes) when the write failed.
        ctx.write(new DatagramPacket(r, from)).addListener(f -> {
            if (f.isSuccess()) {
                replies.sent(requestWord0);
            } else {
                replies.dropped(requestWord0);
                errors.record(flowIndex, f.cause());
            }
        });
        repliesPending = true;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        DatagramPacket packet = (DatagramPacket) msg;
        try {
            if (onlyFrom != null && !onlyFrom.equals(packet.sender().getAddress())) {
                foreign.lazySet(foreign.get() + 1); // the rare case: from someone other than the sender
                return;
            }
            if (!haveBatchTime) {
                batchArrivalNs = System.nanoTime();
                haveBatchTime = clockPerRead;
            }
            if (deliver(flow, packet.content(), batchArrivalNs) && replies != null) {
                reply(ctx, packet);
            }
        } finally {
            packet.release();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        haveBatchTime = false;
        if (repliesPending) {
            repliesPending = false;
            ctx.flush();
        }
    }

    /**
     * A receive error (e.g. ICMP feedback) must not close the socket mid-step: it is counted and the step says
     * so in words; the counts show its effect.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        errors.record(flowIndex, cause);
    }

    /**
     * Hands one datagram's header words to a flow's accounting (a datagram too short for a header goes as zeros,
     * so it counts as corrupt); returns what {@link FlowReceiver#onMessage} returns. Used for requests here and for
     * echo replies on the sender's sockets.
     */
    static boolean deliver(FlowReceiver flow, ByteBuf b, long arrivalNs) {
        int length = b.readableBytes();
        if (length < MessageHeader.LENGTH) {
            return flow.onMessage(0, 0, 0, 0, 0, 0, length, arrivalNs);
        }
        int at = b.readerIndex();
        return flow.onMessage(b.getLong(at + MessageHeader.WORD0_OFFSET), b.getLong(at + MessageHeader.WORD1_OFFSET),
            b.getLong(at + MessageHeader.SEQUENCE_OFFSET), b.getLong(at + MessageHeader.SEND_TIME_OFFSET),
            b.getLong(at + MessageHeader.ACTUAL_SEND_TIME_OFFSET), b.getLong(at + MessageHeader.TAG_OFFSET), length,
            arrivalNs);
    }
}
