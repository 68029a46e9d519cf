package io.lossprobe.core.accounting;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * The tracker against ground truth: random loss, duplication, reordering and very late arrivals, checked against
 * a reference model with unbounded memory (a HashSet) that applies the same documented rules.
 */
class SequenceTrackerProperties {

    /** What really happened to a stream of {@code sent} messages, and the arrival order it produced. */
    record Scenario(long sent, List<Long> arrivals) {
    }

    static Scenario scenario(long seed, int sent, int lossPerMille, int dupPerMille, int maxDisplacement,
                             int veryLatePerMille, int veryLateDistance) {
        Random r = new Random(seed);
        List<long[]> keyed = new ArrayList<>(); // {sortKey, seq}
        for (long seq = 0; seq < sent; seq++) {
            if (r.nextInt(1000) < lossPerMille) {
                // Losses come in bursts sometimes: drop a run of 1..5.
                int run = 1 + r.nextInt(5);
                seq += run - 1;
                continue;
            }
            int copies = r.nextInt(1000) < dupPerMille ? 2 + r.nextInt(2) : 1;
            for (int c = 0; c < copies; c++) {
                long key = seq * 16 + (maxDisplacement == 0 ? 0 : r.nextInt(maxDisplacement * 16 + 1));
                if (r.nextInt(1000) < veryLatePerMille) {
                    key += (long) veryLateDistance * 16;
                }
                keyed.add(new long[] {key, seq});
            }
        }
        Collections.shuffle(keyed, r);
        keyed.sort((a, b) -> Long.compare(a[0], b[0]));
        List<Long> arrivals = new ArrayList<>(keyed.size());
        for (long[] k : keyed) {
            arrivals.add(k[1]);
        }
        return new Scenario(sent, arrivals);
    }

    /** The reference: same rules, unbounded memory. */
    static final class Reference {
        final int window;
        final Set<Long> seen = new HashSet<>();
        long maxSeen = -1;
        long received;
        long duplicates;
        long reordered;
        long tooOld;

        Reference(int window) {
            this.window = window;
        }

        void arrive(long seq) {
            long base = maxSeen < 0 ? 0 : Math.max(0, (((maxSeen >>> 6) + 1) << 6) - window);
            if (seq < base) {
                tooOld++;
                return;
            }
            if (!seen.add(seq)) {
                duplicates++;
                return;
            }
            received++;
            if (seq < maxSeen) {
                reordered++;
            }
            maxSeen = Math.max(maxSeen, seq);
        }

        /** Loss runs over [0, sent): {events, longest, total}. */
        long[] lossRuns(long sent) {
            long events = 0;
            long longest = 0;
            long total = 0;
            long run = 0;
            for (long s = 0; s < sent; s++) {
                if (seen.contains(s)) {
                    if (run > 0) {
                        events++;
                        longest = Math.max(longest, run);
                        total += run;
                    }
                    run = 0;
                } else {
                    run++;
                }
            }
            if (run > 0) {
                events++;
                longest = Math.max(longest, run);
                total += run;
            }
            return new long[] {events, longest, total};
        }
    }

    @Property(tries = 300)
    void countsEqualGroundTruth(@ForAll long seed, @ForAll @IntRange(min = 1, max = 5000) int sent,
                                @ForAll @IntRange(min = 0, max = 300) int lossPerMille,
                                @ForAll @IntRange(min = 0, max = 200) int dupPerMille,
                                @ForAll @IntRange(min = 0, max = 300) int maxDisplacement,
                                @ForAll @IntRange(min = 0, max = 50) int veryLatePerMille,
                                @ForAll @IntRange(min = 0, max = 3) int windowExponent) {
        int window = 64 << windowExponent; // 64..512: small, so the window edges are exercised
        Scenario s = scenario(seed, sent, lossPerMille, dupPerMille, maxDisplacement, veryLatePerMille,
            window * 3);
        SequenceTracker tracker = new SequenceTracker(window);
        Reference ref = new Reference(window);
        for (long seq : s.arrivals()) {
            tracker.onSequence(seq);
            ref.arrive(seq);
        }
        tracker.finish(s.sent());
        long[] runs = ref.lossRuns(s.sent());

        assertThat(tracker.received()).isEqualTo(ref.received);
        assertThat(tracker.duplicates()).isEqualTo(ref.duplicates);
        assertThat(tracker.reordered()).isEqualTo(ref.reordered);
        assertThat(tracker.late() + tracker.lateDuplicates()).isEqualTo(ref.tooOld);
        assertThat(tracker.lossEvents()).isEqualTo(runs[0]);
        assertThat(tracker.bursts().toResult().max()).isEqualTo(runs[1]);
        assertThat(tracker.lostInRuns()).isEqualTo(runs[2]);
        // The contract's identity: lost = sent - received, and it equals the missing sequence numbers exactly.
        assertThat(s.sent() - tracker.received()).isEqualTo(tracker.lostInRuns());
    }

    @Property(tries = 200)
    void withAWindowWiderThanAnyDisplacementNothingIsTooOldAndLossIsExact(
        @ForAll long seed, @ForAll @IntRange(min = 1, max = 20000) int sent,
        @ForAll @IntRange(min = 0, max = 500) int lossPerMille, @ForAll @IntRange(min = 0, max = 100) int dupPerMille,
        @ForAll @IntRange(min = 0, max = 1000) int maxDisplacement) {
        Scenario s = scenario(seed, sent, lossPerMille, dupPerMille, maxDisplacement, 0, 0);
        SequenceTracker tracker = new SequenceTracker(4096);
        BitSet truth = new BitSet();
        long dups = 0;
        for (long seq : s.arrivals()) {
            if (truth.get((int) seq)) {
                dups++;
            }
            truth.set((int) seq);
            tracker.onSequence(seq);
        }
        tracker.finish(sent);
        assertThat(tracker.late() + tracker.lateDuplicates()).isZero();
        assertThat(tracker.received()).isEqualTo(truth.cardinality());
        assertThat(tracker.duplicates()).isEqualTo(dups);
        assertThat(tracker.lostInRuns()).isEqualTo(sent - truth.cardinality());
    }

    @Property(tries = 100)
    void tailLossIsCountedFromTheSendersCount(@ForAll @IntRange(min = 0, max = 3000) int delivered,
                                              @ForAll @IntRange(min = 0, max = 3000) int tail) {
        SequenceTracker tracker = new SequenceTracker(256);
        for (long seq = 0; seq < delivered; seq++) {
            tracker.onSequence(seq);
        }
        tracker.finish(delivered + tail);
        assertThat(tracker.lostInRuns()).isEqualTo(tail);
        assertThat(tracker.lossEvents()).isEqualTo(tail > 0 ? 1 : 0);
        assertThat(tracker.bursts().toResult().max()).isEqualTo(tail);
    }

    @Property(tries = 50)
    void memoryDoesNotDependOnTheNumberOfMessages(@ForAll @LongRange(min = 1, max = 5_000_000) long messages) {
        SequenceTracker tracker = new SequenceTracker(4096);
        long before = tracker.footprintBytes();
        for (long seq = 0; seq < messages; seq += 3) { // two of every three lost: many runs
            tracker.onSequence(seq);
        }
        tracker.finish(messages);
        assertThat(tracker.footprintBytes()).isEqualTo(before).isEqualTo(512);
        assertThat(tracker.received() + tracker.lostInRuns()).isEqualTo(messages);
    }
}
