package io.lossprobe.udp;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;

/**
 * The precision timing mode's way for a receiving thread to wait: while {@link #on}, never (every turn of a Netty
 * event loop looks at its sockets with a zero timeout, and a {@link StampedReader} calls epoll_wait with none, so a
 * datagram is read within a turn, about a microsecond, of its arrival instead of after a wake-up); while off, as
 * Netty does by default (sleep when there is nothing to do). The receiver turns it on for its steps only, so a
 * loop takes a core while a step runs and none between runs. (The sending loop no longer uses it: it sleeps until
 * shortly before each message, {@code SendPacing.PRECISION}.)
 */
final class BusyPoll implements SelectStrategy {
    private volatile boolean on;

    /** Turns busy polling on or off; a sleeping loop sees it at its next wake-up (a task submitted wakes it). */
    void set(boolean on) {
        this.on = on;
    }

    boolean on() {
        return on;
    }

    @Override
    public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
        // selectNow is the non-blocking look (its count of ready sockets, never negative): the loop goes on at once.
        return on || hasTasks ? selectNow.get() : SelectStrategy.SELECT;
    }
}
