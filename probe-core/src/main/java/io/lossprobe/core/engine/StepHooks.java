package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.transport.ReceiverEndpoint;

/**
 * Seams into a run: loss injection on the send path and actions during a step's window (tests), and the moment a
 * step's sending is about to begin (a run of two directions starts both at once there).
 */
public interface StepHooks {
    StepHooks NONE = new StepHooks() {
    };

    /** Hooks whose only seam is {@code filter} on every step's send loop. */
    static StepHooks sendFilter(SendFilter filter) {
        return new StepHooks() {
            @Override
            public SendFilter sendFilter(String transport, int step) {
                return filter;
            }
        };
    }

    /** The filter for this step's send loop ({@link SendFilter#NONE} in real runs). */
    default SendFilter sendFilter(String transport, int step) {
        return SendFilter.NONE;
    }

    /** Echo mode: replies this filter picks are never sent back ({@link SendFilter#NONE} in real runs). */
    default SendFilter replyFilter(String transport, int step) {
        return SendFilter.NONE;
    }

    /**
     * Called from the engine's thread once a step is set up on every side, just before its window's counters are
     * sampled and its senders start: {@code run --bidir} waits here for the other direction's step.
     */
    default void beforeStart(String transport, int step) throws Exception {
    }

    /** Called from the engine's thread while the window runs, with the elapsed window time. */
    default void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs)
        throws Exception {
    }
}
