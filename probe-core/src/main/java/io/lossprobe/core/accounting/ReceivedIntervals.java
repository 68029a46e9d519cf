package io.lossprobe.core.accounting;

import io.lossprobe.core.result.SignedHistogram;

/**
 * A step's receive counts per interval over all flows: the flows' {@link IntervalTally}s added up (on the
 * receiving host, so only the sums travel between hosts).
 *
 * @param delay per interval, the delays of its messages (empty where none arrived)
 */
public record ReceivedIntervals(long[] received, long[] duplicates, long[] reordered, SignedHistogram[] delay) {
    public ReceivedIntervals {
        int n = received.length;
        if (duplicates.length != n || reordered.length != n || delay.length != n) {
            throw new IllegalArgumentException("one count of each kind per interval");
        }
    }

    /** The sum of {@code flows}' tallies, which all cut the same window alike. */
    public static ReceivedIntervals sum(IntervalTally[] flows) {
        int n = flows[0].intervals();
        long[] received = new long[n];
        long[] duplicates = new long[n];
        long[] reordered = new long[n];
        SignedHistogram[] delay = new SignedHistogram[n];
        for (int i = 0; i < n; i++) {
            delay[i] = new SignedHistogram();
        }
        for (IntervalTally t : flows) {
            if (t.intervals() != n) {
                throw new IllegalArgumentException("flows cut the window into different intervals");
            }
            for (int i = 0; i < n; i++) {
                received[i] += t.received(i);
                duplicates[i] += t.duplicates(i);
                reordered[i] += t.reordered(i);
                if (t.delay(i) != null) {
                    delay[i].add(t.delay(i));
                }
            }
        }
        return new ReceivedIntervals(received, duplicates, reordered, delay);
    }

    public int intervals() {
        return received.length;
    }
}
