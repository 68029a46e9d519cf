package io.lossprobe.core.accounting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.lossprobe.core.accounting.ArrivalPatterns.Case;
import io.lossprobe.core.result.LossBurst;
import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.statistics.StatisticsReport;

/**
 * The tracker against {@link SequenceModel}, a reference with unbounded memory that applies the same documented
 * rules. jqwik generates the arrival lists themselves ({@link ArrivalPatterns}), so a failure shrinks to a short
 * list of arrivals. Windows are small (64..512 bits) so that the window edges are crossed often.
 */
class SequenceTrackerProperties {
    private static final String[] CLASSES = {"NEW", "REORDERED", "DUPLICATE", "LATE", "LATE_DUPLICATE",
        "LATE_UNKNOWN"};

    @Provide
    Arbitrary<Case> realistic() {
        return ArrivalPatterns.realistic(2000);
    }

    @Provide
    Arbitrary<Case> adversarial() {
        return ArrivalPatterns.adversarial();
    }

    @Provide
    Arbitrary<Case> beyondSent() {
        return ArrivalPatterns.beyondSent();
    }

    @Provide
    Arbitrary<Case> thousandWindows() {
        return ArrivalPatterns.periodic(1000);
    }

    /** Loss runs, duplicates, reordering and very late arrivals applied to the sender's numbers 0..n-1. */
    @Property(tries = 1000)
    @StatisticsReport(onFailureOnly = true)
    void realisticArrivalsMatchTheModel(@ForAll("realistic") Case c) {
        SequenceTracker t = assertTrackerMatchesModel(c);
        Statistics.label("late").collect(t.late() > 0);
        Statistics.label("late duplicates").collect(t.lateDuplicates() > 0);
        Statistics.label("sender failures").collect(!c.failed().isEmpty());
        Statistics.label("duplicates").collect(t.duplicates() > 0);
        Statistics.label("reordered").collect(t.reordered() > 0);
        Statistics.label("several loss runs").collect(t.lossEvents() > 1);
        Statistics.label("late").coverage(cov -> cov.check(true).percentage(p -> p > 10));
        Statistics.label("late duplicates").coverage(cov -> cov.check(true).percentage(p -> p > 3));
        Statistics.label("sender failures").coverage(cov -> cov.check(true).percentage(p -> p > 30));
        Statistics.label("duplicates").coverage(cov -> cov.check(true).percentage(p -> p > 30));
        Statistics.label("reordered").coverage(cov -> cov.check(true).percentage(p -> p > 30));
        Statistics.label("several loss runs").coverage(cov -> cov.check(true).percentage(p -> p > 30));
    }

    /** Arbitrary numbers in [0, sent): collisions in one window, and jumps of up to 2^61 taken in O(1). */
    @Property(tries = 1000)
    @StatisticsReport(onFailureOnly = true)
    void adversarialArrivalsMatchTheModel(@ForAll("adversarial") Case c) {
        SequenceTracker t = assertTrackerMatchesModel(c);
        Statistics.label("over 2^40 lost (huge jumps)").collect(t.lostInRuns() > (1L << 40));
        Statistics.label("over 2^40 lost (huge jumps)").coverage(cov -> cov.check(true).percentage(p -> p > 10));
    }

    /** A sender count lower than what arrived: accounting ends where the window has already finalised. */
    @Property(tries = 300)
    void arrivalsBeyondSentMatchTheModel(@ForAll("beyondSent") Case c) {
        assertTrackerMatchesModel(c);
    }

    /** Periodic disturbance over a stream at least 1000 windows long: the bitmap wraps 1000 times. */
    @Property(tries = 10)
    void streamsThousandWindowsLongMatchTheModel(@ForAll("thousandWindows") Case c) {
        assertTrackerMatchesModel(c);
    }

    /** Everything the tracker counts, compared in one assertion so that a failure shows every difference. */
    record Counts(long received, long duplicates, long reordered, long late, long lateDuplicates, long highest,
                  long lossEvents, long lostInRuns, LossBurst bursts, long footprintBytes) {
        static Counts of(SequenceTracker t) {
            return new Counts(t.received(), t.duplicates(), t.reordered(), t.late(), t.lateDuplicates(), t.highest(),
                t.lossEvents(), t.lostInRuns(), t.bursts().toResult(), t.footprintBytes());
        }
    }

    /** Feeds the case to a tracker and the model, asserts they agree; returns the tracker for statistics. */
    static SequenceTracker assertTrackerMatchesModel(Case c) {
        int window = c.windowBits();
        SequenceTracker tracker = new SequenceTracker(window, c.ledger());
        SequenceModel model = new SequenceModel(window, c.failed());
        List<Long> arrivals = c.arrivals();
        for (int i = 0; i < arrivals.size(); i++) {
            long seq = arrivals.get(i);
            long lag = model.highest() - seq;
            int expected = model.arrive(seq);
            int actual = tracker.onSequence(seq);
            if (actual != expected) {
                fail("arrival #%d (seq %d): tracker says %s, model says %s", i, seq, CLASSES[actual],
                    CLASSES[expected]);
            }
            // The window as documented, independent of the model's base arithmetic: at least windowBits behind
            // the highest is too old; within windowBits - 64 (the highest's word may be the window's last) is not.
            boolean tooOld = expected == SequenceTracker.LATE || expected == SequenceTracker.LATE_DUPLICATE;
            if (lag >= window && !tooOld || lag <= window - 64 && tooOld) {
                fail("arrival #%d (seq %d) %d behind the highest: %s", i, seq, lag, CLASSES[expected]);
            }
        }
        long sent = c.sent();
        tracker.finish(sent);

        List<Long> runs = model.lossRuns(sent);
        Counts expected = new Counts(model.received(), model.duplicates(), model.reordered(), model.late(),
            model.lateDuplicates(), model.highest(), runs.size(), runs.stream().mapToLong(Long::longValue).sum(),
            model.bursts(sent).toResult(), window / 8);
        assertThat(Counts.of(tracker)).as("model's loss runs %s", runs).isEqualTo(expected);
        // The lost set, range by range as the model finds it; unknown past the bound, never a partial set.
        List<long[]> lostRanges = model.lostRanges(sent);
        LostSet lostSet = tracker.lostSet();
        if (lostRanges.size() > LostSet.MAX_RANGES) {
            assertThat(lostSet).isEqualTo(LostSet.UNKNOWN);
        } else {
            long[] pairs = lostRanges.stream().flatMapToLong(java.util.Arrays::stream).toArray();
            assertThat(lostSet.pairs()).as("lost ranges").containsExactly(pairs);
            assertThat(lostSet.count()).as("|lost set| == lostInRuns").isEqualTo(tracker.lostInRuns());
        }
        // The contract's identities (measurement-contract.md).
        assertThat(tracker.lossEvents() == 0).as("lossEvents == 0 iff lostInRuns == 0")
            .isEqualTo(tracker.lostInRuns() == 0);
        if (c.nothingBeyondSent()) {
            // sent here is the wire end: the sender's sent count is it minus the failed numbers.
            long sentCount = sent - model.skippedBelow(sent);
            assertThat(tracker.lostInRuns()).as("lostInRuns == sent - received")
                .isEqualTo(sentCount - tracker.received());
            // After the step closed, late arrivals are told apart exactly: a lost number is a late first arrival
            // once, a duplicate after that; anything that arrived before (in time or late) is a duplicate.
            // Memory is bounded: below what the tracker still remembers, the answer is "unknown", never a guess.
            long lost = model.lastLostBelow(sent);
            if (lost >= 0) {
                assertThat(tracker.classifyLate(lost)).as("lost %d arriving late", lost)
                        .isEqualTo(SequenceTracker.LATE);
                assertThat(tracker.classifyLate(lost)).isEqualTo(SequenceTracker.LATE_DUPLICATE);
            }
            if (!arrivals.isEmpty()) {
                long seq = arrivals.get(arrivals.size() - 1);
                assertThat(tracker.classifyLate(seq)).as("arrived %d, late again", seq).isEqualTo(
                    seq < tracker.forgottenBelow() ? SequenceTracker.LATE_UNKNOWN : SequenceTracker.LATE_DUPLICATE);
            }
            long first = model.firstLostBelow(sent);
            if (first >= 0 && first < tracker.forgottenBelow()) {
                assertThat(tracker.classifyLate(first)).isEqualTo(SequenceTracker.LATE_UNKNOWN);
            }
        }
        return tracker;
    }
}
