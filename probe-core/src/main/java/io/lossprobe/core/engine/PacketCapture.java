package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.PacketSlots;
import io.lossprobe.core.result.StepResult;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code run --packets}: every kept step recorded message by message, handed to a {@link Sink} once its pass ended
 * (its receivers closed, so the late arrivals the step's result counted are in the record too, and nothing writes
 * to it any more). Each step records at most {@code rowsPerStep} rows, shared evenly by its flows, of every
 * {@code every}-th wire sequence number.
 */
public final class PacketCapture {
    /** Gets each recorded step, on the engine's thread, between passes. */
    @FunctionalInterface
    public interface Sink {
        void write(PacketStep step) throws IOException;
    }

    private final long rowsPerStep;
    private final int every;
    private final Sink sink;
    private final List<Pending> pending = new ArrayList<>();

    public PacketCapture(long rowsPerStep, int every, Sink sink) {
        if (rowsPerStep < 1 || every < 1) {
            throw new IllegalArgumentException("rows per step " + rowsPerStep + ", every " + every);
        }
        this.rowsPerStep = rowsPerStep;
        this.every = every;
        this.sink = sink;
    }

    int every() {
        return every;
    }

    /** Rows each of {@code flows} flows may record in a step. */
    int capacity(int flows) {
        return (int) Math.min(Integer.MAX_VALUE - 16, Math.max(1, rowsPerStep / flows));
    }

    /** What a kept step left to write once its pass ends. */
    record Pending(int step, long windowStartNs, long[] wireEnd, FailedRanges[] failures, PacketSlots[] received,
                   SentTimes[] sent) {
    }

    /** A pass begins: a failed pass's records before it are dropped, never written against another's results. */
    void passStarted() {
        pending.clear();
    }

    void kept(Pending step) {
        pending.add(step);
    }

    /** The pass ended: its steps' results, final now, go to the sink with their records. */
    void passEnded(List<StepResult> results) throws IOException {
        try {
            for (Pending p : pending) {
                for (StepResult r : results) {
                    if (r.step() == p.step()) {
                        sink.write(new PacketStep(r, p.windowStartNs(), p.wireEnd(), p.failures(), p.received(),
                            p.sent()));
                    }
                }
            }
        } finally {
            pending.clear();
        }
    }
}
