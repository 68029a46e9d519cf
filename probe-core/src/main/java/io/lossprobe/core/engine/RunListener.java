package io.lossprobe.core.engine;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;

/** What the run engine tells its caller as it goes. Every method has an empty default. */
public interface RunListener {
    /** Phases of a step, for progress displays. */
    enum Phase { WARMUP, WINDOW, DRAIN }

    default void stepStarted(String transport, int step, Level level) {
    }

    /** Called a few times a second during a step, from the engine's thread. */
    default void progress(String transport, int step, Phase phase, long elapsedNs, long totalNs, long sent,
                          long received) {
    }

    default void stepFinished(StepResult result) {
    }

    /**
     * A multicast run lost {@code receiver} ({@code why}: when, and what failed); the run goes on with the others,
     * counting everything sent as lost to it. Called once per receiver, from the engine's thread.
     */
    default void receiverGone(String receiver, String why) {
    }

    /**
     * A step's whole distribution for interval logs: {@code kind} is {@code delay} (one-way) or {@code rtt} (echo
     * round trip), values in ns, recorded between {@code startEpochMs} and {@code endEpochMs}. Between hosts a
     * one-way delay may hold values below zero (within the clock estimate's uncertainty).
     */
    default void stepHistogram(String transport, int step, String kind,
                               io.lossprobe.core.result.SignedHistogram histogram, long startEpochMs,
                               long endEpochMs) {
    }

    /**
     * A step's distribution per interval ({@code --interval}): {@code intervals[i]} holds the values of the messages
     * intended in interval i, which spans {@code intervalNs} from {@code windowStartEpochMs} + i x interval (the
     * last ends with the window, {@code windowNs}); {@code whole} is the step's. Called before
     * {@link #stepHistogram} for the same step and kind.
     */
    default void stepIntervalHistograms(String transport, int step, String kind,
                                        io.lossprobe.core.result.SignedHistogram[] intervals,
                                        io.lossprobe.core.result.SignedHistogram whole, long windowStartEpochMs,
                                        long intervalNs, long windowNs) {
    }

    /** A rate search's trial, measured (not kept as a step). */
    default void trialFinished(String transport, int messageSize, io.lossprobe.core.result.SearchTrial trial,
                               java.util.Map<String, String> verdicts) {
    }

    /** A rate search ended: its findings, one per criterion. */
    default void searchFinished(java.util.List<io.lossprobe.core.result.SearchResult> found) {
    }

    /** The run as it stands after each step (and at the end): write it out so nothing is lost on Ctrl-C. */
    default void resultsUpdated(RunResult partial) {
    }
}
