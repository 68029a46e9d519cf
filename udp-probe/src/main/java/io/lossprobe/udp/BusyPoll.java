package io.lossprobe.udp;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;

/**
 * The precision timing mode's way for a Netty event loop to wait: while {@link #on}, never (every turn looks at
 * its sockets with a zero timeout and runs the tasks due, a scheduled send cycle included, so both start within a
 * turn of when they should, about a microsecond, instead of after a timer's slack and a wake-up); while off, as
 * Netty does by default (sleep when there is nothing to do). An endpoint turns it on for its steps only, so a loop
 * takes a core while a step runs and none between runs.
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
