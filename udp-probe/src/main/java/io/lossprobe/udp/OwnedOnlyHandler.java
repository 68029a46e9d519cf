package io.lossprobe.udp;

import io.lossprobe.core.transport.LoopErrors;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * A channel whose socket one of lossprobe's own threads reads ({@link StampedReader}): Netty only owns it and
 * reports what its loop caught.
 */
final class OwnedOnlyHandler extends ChannelInboundHandlerAdapter {
    private final LoopErrors errors;
    private final int flow;

    OwnedOnlyHandler(LoopErrors errors, int flow) {
        this.errors = errors;
        this.flow = flow;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        errors.record(flow, cause);
    }
}
