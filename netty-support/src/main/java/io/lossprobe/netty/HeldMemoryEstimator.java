package io.lossprobe.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.MessageSizeEstimator;

/**
 * Sizes a queued write by the buffer memory it holds, not by its readable bytes, so a channel's write-buffer water
 * marks bound the pooled memory a blocked flow pins. Netty's default counts readable bytes: a GSO batch of one
 * 64-byte message in a 4 KiB pooled buffer counted 64, so 1 MiB "queued" could pin 26 MiB (docs/performance.md).
 * A pooled buffer's memory is its writer index plus what it can still take without reallocating (its size class's
 * length); for other buffers that is their capacity.
 */
public final class HeldMemoryEstimator implements MessageSizeEstimator {
    public static final HeldMemoryEstimator INSTANCE = new HeldMemoryEstimator();

    private static final Handle HANDLE = HeldMemoryEstimator::heldBytes;

    private HeldMemoryEstimator() {
    }

    /** Bytes of buffer memory {@code msg} holds: a buffer's, a holder's content's; 0 for anything else. */
    public static int heldBytes(Object msg) {
        ByteBuf b = msg instanceof ByteBuf buf ? buf : msg instanceof ByteBufHolder h ? h.content() : null;
        if (b == null) {
            return 0;
        }
        long held = (long) b.writerIndex() + b.maxFastWritableBytes();
        return (int) Math.min(Integer.MAX_VALUE, held);
    }

    @Override
    public Handle newHandle() {
        return HANDLE;
    }
}
