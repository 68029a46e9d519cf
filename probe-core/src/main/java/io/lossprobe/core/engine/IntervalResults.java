package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.ReceivedIntervals;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.IntervalResult;
import io.lossprobe.core.result.Latency;
import java.util.ArrayList;
import java.util.List;

/**
 * A step's intervals from the senders' counts and the receivers' ({@code --interval}), both by intended send time.
 * The intervals' counts must add up to the step's exactly and no interval may lose less than nothing: a check that
 * can fail, warned about like the step's own.
 */
record IntervalResults(List<IntervalResult> intervals) {
    static IntervalResults of(SentIntervals sent, ReceivedIntervals received, long intervalNs, long windowNs,
                              String basis, Long uncertaintyNs) {
        int n = Math.min(sent.intervals(), received.intervals());
        List<IntervalResult> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long start = i * intervalNs;
            long end = i == n - 1 ? Math.max(windowNs, start + 1) : Math.min(windowNs, start + intervalNs);
            double seconds = (end - start) / 1e9;
            long s = sent.sent()[i];
            long r = received.received()[i];
            long failed = sent.sendFailed()[i];
            long scheduled = sent.scheduled()[i];
            out.add(new IntervalResult(i, start, end, scheduled, s, failed, scheduled - s - failed, r, s - r,
                received.duplicates()[i], received.reordered()[i], round(s / seconds), round(r / seconds),
                Latency.of(received.delay()[i], basis, uncertaintyNs)));
        }
        return new IntervalResults(out);
    }

    /** Where the intervals disagree with the step's totals (a defect of the accounting): one warning each. */
    List<String> warnings(Counts step) {
        long scheduled = 0;
        long sent = 0;
        long sendFailed = 0;
        long behind = 0;
        long received = 0;
        long lost = 0;
        long duplicates = 0;
        long reordered = 0;
        List<String> out = new ArrayList<>();
        for (IntervalResult iv : intervals) {
            scheduled += iv.scheduled();
            sent += iv.sent();
            sendFailed += iv.sendFailed();
            behind += iv.behind();
            received += iv.received();
            lost += iv.lost();
            duplicates += iv.duplicates();
            reordered += iv.reordered();
            if (iv.lost() < 0 || iv.behind() < 0) {
                out.add("interval check failed: interval " + iv.index() + " has lost " + iv.lost() + ", behind "
                    + iv.behind());
            }
        }
        long[] sums = {scheduled, sent, sendFailed, behind, received, lost, duplicates, reordered};
        long[] totals = {step.scheduled(), step.sent(), step.sendFailed(), step.behind(), step.received(), step.lost(),
            step.duplicates(), step.reordered()};
        String[] names = {"scheduled", "sent", "sendFailed", "behind", "received", "lost", "duplicates", "reordered"};
        for (int k = 0; k < sums.length; k++) {
            if (sums[k] != totals[k]) {
                out.add("interval check failed: the intervals' " + names[k] + " add up to " + sums[k]
                    + ", the step's is " + totals[k]);
            }
        }
        return out;
    }

    private static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
