package io.lossprobe.benchmarks;

import io.lossprobe.core.accounting.SequenceTracker;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * {@link SequenceTracker#onSequence} per message, over arrival patterns: in order, with one loss in 100 (the
 * window slides over gaps and closes loss runs), and with adjacent pairs swapped (every other arrival reordered).
 * The window is the size the engine picks for a 1M msg/s flow.
 */
public class SequenceTrackerBenchmark extends HotPathBenchmark {
    @Param({"inOrder", "loss1in100", "swappedPairs"})
    public String pattern;

    private SequenceTracker tracker;
    private long next;
    private int mode;
    private int sinceGap;

    @Setup(Level.Iteration)
    public void setUp() {
        tracker = new SequenceTracker(SequenceTracker.windowFor(1_000_000, 2.0));
        next = 0;
        sinceGap = 0;
        // An int, not the String: a string switch per operation would be measured along with the tracker.
        mode = switch (pattern) {
            case "loss1in100" -> 1;
            case "swappedPairs" -> 2;
            default -> 0;
        };
    }

    @Benchmark
    public int onSequence() {
        long seq;
        switch (mode) {
            case 1 -> {                                          // skips one number in every hundred
                if (++sinceGap == 99) {
                    sinceGap = 0;
                    next++;
                }
                seq = next++;
            }
            case 2 -> seq = next++ ^ 1;                          // 1, 0, 3, 2, ...
            default -> seq = next++;
        }
        return tracker.onSequence(seq);
    }
}
