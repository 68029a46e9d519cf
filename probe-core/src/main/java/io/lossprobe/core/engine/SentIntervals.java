package io.lossprobe.core.engine;

/**
 * A step's sending per interval ({@code --interval}), one flow's or all flows' added up: what the schedule called
 * for, what went on the wire and was not reported failed, and what failed (refused, or failed after being
 * accepted), each by the messages' intended send times.
 */
public record SentIntervals(long[] scheduled, long[] sent, long[] sendFailed) {
    public SentIntervals {
        if (sent.length != scheduled.length || sendFailed.length != scheduled.length) {
            throw new IllegalArgumentException("one count of each kind per interval");
        }
    }

    public int intervals() {
        return scheduled.length;
    }

    /** The sum of several flows' (cut into the same intervals). */
    public static SentIntervals sum(SentIntervals[] flows) {
        int n = flows[0].intervals();
        long[] scheduled = new long[n];
        long[] sent = new long[n];
        long[] failed = new long[n];
        for (SentIntervals f : flows) {
            if (f.intervals() != n) {
                throw new IllegalArgumentException("flows cut the window into different intervals");
            }
            for (int i = 0; i < n; i++) {
                scheduled[i] += f.scheduled[i];
                sent[i] += f.sent[i];
                failed[i] += f.sendFailed[i];
            }
        }
        return new SentIntervals(scheduled, sent, failed);
    }
}
