package io.lossprobe.tcp;

import io.lossprobe.core.transport.LoopErrors;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.concurrent.TimeUnit;

/**
 * On a flow's listener: an accept that fails (EMFILE or ENFILE: no file descriptor left) pauses accepting, 10 ms
 * doubling to 1 s, and accepting resumes on its own; the first connection accepted resets the pause. The error is
 * counted against the flow and said in the step's notes.
 *
 * <p>Netty 4.2's epoll listener is level-triggered: a connection the kernel holds in the backlog keeps it readable,
 * so without a pause every turn of the loop would fail the same accept again. Netty's own
 * {@code ServerBootstrapAcceptor} would pause 1 s too, but only after this handler: the error stops here, so it
 * does not also reach the pipeline's tail, where Netty logs it with a stack trace.
 */
final class AcceptBackoff extends ChannelInboundHandlerAdapter {
    static final long FIRST_PAUSE_NS = TimeUnit.MILLISECONDS.toNanos(10);
    static final long MAX_PAUSE_NS = TimeUnit.SECONDS.toNanos(1);

    private final LoopErrors errors;
    private final int flow;
    private long pauseNs = FIRST_PAUSE_NS;

    AcceptBackoff(LoopErrors errors, int flow) {
        this.errors = errors;
        this.flow = flow;
    }

    /** A connection was accepted (the listener reads its new channels): the next failure pauses briefly again. */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object child) {
        pauseNs = FIRST_PAUSE_NS;
        ctx.fireChannelRead(child);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        errors.record(flow, cause);
        if (!ctx.channel().config().isAutoRead()) {
            return; // already paused
        }
        ctx.channel().config().setAutoRead(false);
        ctx.executor().schedule(() -> {
            if (ctx.channel().isOpen()) {
                ctx.channel().config().setAutoRead(true);
            }
        }, pauseNs, TimeUnit.NANOSECONDS);
        pauseNs = Math.min(MAX_PAUSE_NS, 2 * pauseNs);
    }
}
