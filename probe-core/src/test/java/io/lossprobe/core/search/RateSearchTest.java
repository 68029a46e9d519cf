package io.lossprobe.core.search;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.plan.SearchPlan;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.SearchTrial;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.Test;

/**
 * The search against a model path whose answer is known: a capacity (beyond it the excess is lost, once a queue
 * of {@code bufferMessages} is full), a sender that cannot go beyond its own speed, and loss scripted per trial.
 */
class RateSearchTest {
    private static final long S = 1_000_000_000L;
    private static final long FULL_NS = S;
    private static final long SHORT_NS = 200_000_000L;

    /** A path of capacity {@code capacity}/s and a sender of at most {@code senderMax}/s. */
    static final class Model implements RateSearch.Trials {
        final long capacity;
        final long senderMax;
        long bufferMessages;
        /** Fraction lost at every rate, on top of the capacity's. */
        double randomLoss;
        /** Trials (by number, from 1) that lose {@code spuriousLost} more messages. */
        LongPredicate spurious = n -> false;
        long spuriousLost = 3;
        final List<Long> rates = new ArrayList<>();

        Model(long capacity, long senderMax) {
            this.capacity = capacity;
            this.senderMax = senderMax;
        }

        @Override
        public RateSearch.Measured measure(long rate, boolean full) {
            rates.add(rate);
            long windowNs = full ? FULL_NS : SHORT_NS;
            double seconds = windowNs / 1e9;
            long offered = rate == 0 ? senderMax : Math.min(rate, senderMax);
            long scheduled = rate == 0 ? (long) (offered * seconds) : (long) (rate * seconds);
            long sent = (long) (offered * seconds);
            long excess = Math.max(0, (long) ((offered - capacity) * seconds) - bufferMessages);
            long lost = excess + (long) Math.ceil(sent * randomLoss);
            if (spurious.test(rates.size())) {
                lost += spuriousLost;
            }
            lost = Math.min(lost, sent);
            long received = sent - lost;
            return new RateSearch.Measured(rate, windowNs, scheduled, sent, received, 0, scheduled - sent,
                sent / seconds, received / seconds, Latency.EMPTY);
        }
    }

    /** A trial whose sender got out only a {@code divisor}-th of its schedule, all of it delivered. */
    private static RateSearch.Measured senderShort(long rate, boolean full, long divisor) {
        long windowNs = full ? FULL_NS : SHORT_NS;
        long scheduled = rate * windowNs / 1_000_000_000L;
        long sent = scheduled / divisor;
        return new RateSearch.Measured(rate, windowNs, scheduled, sent, sent, 0, scheduled - sent,
            sent * 1e9 / windowNs, sent * 1e9 / windowNs, Latency.EMPTY);
    }

    private static SearchPlan plan(long maxRate, int maxTrials, double precision) {
        return new SearchPlan(List.of("ndr", "pdr"), 0.005, precision, 100, maxRate, SHORT_NS, maxTrials, List.of());
    }

    private static Map<String, RateSearch.Finding> run(SearchPlan plan, Model model) throws Exception {
        Map<String, RateSearch.Finding> out = new java.util.LinkedHashMap<>();
        for (RateSearch.Finding f : new RateSearch(plan, FULL_NS).run(model)) {
            out.put(f.criterion(), f);
        }
        return out;
    }

    @Test
    void bothCriteriaConvergeOnTheCapacityWithinThePrecision() throws Exception {
        Model model = new Model(300_000, 2_000_000);
        Map<String, RateSearch.Finding> found = run(plan(0, 40, 0.02), model);
        RateSearch.Finding ndr = found.get("ndr");
        assertThat(ndr.converged()).isTrue();
        assertThat(ndr.boundedBy()).hasToString("path");
        assertThat(ndr.lowerBound()).isLessThanOrEqualTo(300_000);
        assertThat(ndr.upperBound()).isGreaterThan(300_000);
        assertThat(ndr.width()).isLessThanOrEqualTo(0.02);
        assertThat(ndr.rate()).isEqualTo(ndr.lowerBound());
        assertThat(ndr.lossRatio()).isZero();
        // PDR allows 0.5 %: the excess may be 0.5 % of what is sent, so it lies at capacity / 0.995.
        RateSearch.Finding pdr = found.get("pdr");
        assertThat(pdr.boundedBy()).hasToString("path");
        assertThat(pdr.lowerBound()).isLessThanOrEqualTo(301_508);
        assertThat(pdr.upperBound()).isGreaterThan(301_507);
        assertThat(pdr.lossRatio()).isLessThanOrEqualTo(0.005);
        // The answer is a full-length pass; the trials went short first.
        assertThat(ndr.trials()).filteredOn(t -> t.rate() == ndr.rate() && t.phase().equals("full"))
            .anyMatch(t -> t.verdict().equals(SearchTrial.PASS));
        assertThat(ndr.trials().get(0).phase()).isEqualTo("probe");
        assertThat(ndr.trials().get(0).rate()).as("the first trial at full tilt").isZero();
        assertThat(ndr.trials().get(1).phase()).isEqualTo("short");
        assertThat(ndr.trials().size()).isLessThanOrEqualTo(40);
    }

    @Test
    void aSenderSlowerThanThePathBoundsTheSearchAndSaysSo() throws Exception {
        Model model = new Model(5_000_000, 400_000);
        Map<String, RateSearch.Finding> found = run(plan(1_000_000, 40, 0.02), model);
        for (RateSearch.Finding f : found.values()) {
            assertThat(f.boundedBy()).as(f.criterion()).hasToString("sender");
            assertThat(f.converged()).isTrue();
            // Within 1 % of its speed the sender counts as carrying the rate: 400,000 / 0.99 at most.
            assertThat(f.lowerBound()).isLessThanOrEqualTo(404_040).isGreaterThanOrEqualTo((long) (400_000 / 1.02));
            assertThat(f.upperBound()).as("the lowest rate the sender could not carry").isGreaterThan(404_040);
            assertThat(f.trials()).filteredOn(t -> t.rate() > 404_040).allMatch(SearchTrial::senderLimited)
                .allMatch(t -> t.verdict().equals(SearchTrial.SENDER_LIMITED));
            assertThat(f.trials()).noneMatch(t -> t.verdict().equals(SearchTrial.FAIL));
        }
    }

    @Test
    void aPathFasterThanTheSearchMaximumPassesThere() throws Exception {
        Model model = new Model(5_000_000, 9_000_000);
        Map<String, RateSearch.Finding> found = run(plan(200_000, 40, 0.02), model);
        for (RateSearch.Finding f : found.values()) {
            assertThat(f.boundedBy()).hasToString("max");
            assertThat(f.rate()).isEqualTo(200_000);
            assertThat(f.upperBound()).isNull();
        }
        assertThat(model.rates).hasSizeLessThanOrEqualTo(3);
    }

    @Test
    void lossAtEveryRateEndsAtTheMinimumWithNoRate() throws Exception {
        Model model = new Model(5_000_000, 9_000_000);
        model.randomLoss = 0.01;
        Map<String, RateSearch.Finding> found = run(plan(1_000_000, 60, 0.02), model);
        for (RateSearch.Finding f : found.values()) {
            assertThat(f.boundedBy()).as(f.criterion()).hasToString("min");
            assertThat(f.rate()).isNull();
            assertThat(f.upperBound()).isEqualTo(100);
        }
    }

    @Test
    void aOneOffLossInAFullTrialIsRepeatedAndTakenForNoise() throws Exception {
        Model model = new Model(300_000, 2_000_000);
        List<Long> fullRates = new ArrayList<>();
        // The first paced full-length trial (the short phase's lower bound) loses 3 messages once.
        RateSearch search = new RateSearch(plan(0, 40, 0.02), FULL_NS);
        int[] firstFull = {-1};
        RateSearch.Trials trials = (rate, full) -> {
            if (full && rate > 0 && firstFull[0] < 0) {
                firstFull[0] = model.rates.size() + 1;
                model.spurious = n -> n == firstFull[0];
            }
            if (full && rate > 0) {
                fullRates.add(rate);
            }
            return model.measure(rate, full);
        };
        List<RateSearch.Finding> found = search.run(trials);
        RateSearch.Finding ndr = found.get(0);
        assertThat(fullRates.get(1)).as("repeated at once").isEqualTo(fullRates.get(0));
        assertThat(ndr.trials().get(firstFull[0] - 1).outlier()).isTrue();
        assertThat(ndr.trials().get(firstFull[0] - 1).verdict()).isEqualTo(SearchTrial.FAIL);
        assertThat(ndr.lowerBound()).isLessThanOrEqualTo(300_000).isGreaterThanOrEqualTo((long) (300_000 / 1.02));
        assertThat(ndr.boundedBy()).hasToString("path");
    }

    @Test
    void shortTrialsThatABufferHidesTheExcessFromAreCorrectedAtFullLength() throws Exception {
        // A queue of 20,000 messages: a 200 ms trial at 5 % over capacity (3,000 extra) never fills it.
        Model model = new Model(300_000, 2_000_000);
        model.bufferMessages = 20_000;
        Map<String, RateSearch.Finding> found = run(plan(0, 40, 0.02), model);
        RateSearch.Finding ndr = found.get("ndr");
        assertThat(ndr.boundedBy()).hasToString("path");
        // At 1 s, the excess beyond capacity must exceed 20,000 to lose: 320,000/s at most passes.
        assertThat(ndr.lowerBound()).isLessThanOrEqualTo(320_000);
        assertThat(ndr.upperBound()).isGreaterThan(320_000);
    }

    @Test
    void aBudgetTooSmallEndsUnfinishedWithTheBoundsSoFar() throws Exception {
        Model model = new Model(300_000, 2_000_000);
        Map<String, RateSearch.Finding> found = run(plan(0, 4, 0.001), model);
        assertThat(model.rates).hasSize(4);
        for (RateSearch.Finding f : found.values()) {
            assertThat(f.converged()).isFalse();
            assertThat(f.boundedBy()).hasToString("trials");
        }
    }

    @Test
    void roundingKeepsThreeDigitsOnlyStrictlyInsideTheBounds() {
        assertThat(RateSteps.round(812_345, 800_000, 825_000)).isEqualTo(812_000);
        assertThat(RateSteps.round(800_400, 800_000, 801_000)).isEqualTo(800_400);
    }

    /**
     * A cold first trial whose sender managed a tenth of the rate is a bound the search approaches by halving the
     * gap, not a speed it believes: it still finds the path's capacity, in few trials.
     */
    @Test
    void aColdFirstTrialThatFellShortDoesNotHideThePath() throws Exception {
        Model model = new Model(300_000, 2_000_000);
        RateSearch.Trials coldFirst = (rate, full) -> {
            if (model.rates.isEmpty()) {
                model.rates.add(rate);
                return senderShort(rate, full, 10);
            }
            return model.measure(rate, full);
        };
        List<RateSearch.Finding> found = new RateSearch(plan(1_000_000, 40, 0.02), FULL_NS).run(coldFirst);
        RateSearch.Finding ndr = found.get(0);
        assertThat(ndr.trials().get(0).verdict()).isEqualTo(SearchTrial.SENDER_LIMITED);
        assertThat(ndr.boundedBy()).hasToString("path");
        assertThat(ndr.lowerBound()).isLessThanOrEqualTo(300_000).isGreaterThanOrEqualTo((long) (300_000 / 1.02));
        assertThat(model.rates).hasSizeLessThan(20);
    }

    /**
     * A sender starved once (another process took its CPU for one trial) does not bound the search: the trial is
     * repeated at once, the repeat carries the rate, and the search finds the path's capacity, bounded by the path.
     * Without the repeat the starved trial's rate would be the sender's ceiling, below the capacity.
     */
    @Test
    void aSenderStarvedForOneTrialIsMeasuredAgainNotTakenForItsSpeed() throws Exception {
        Model model = new Model(300_000, 2_000_000);
        int[] calls = {0};
        RateSearch.Trials starvedOnce = (rate, full) -> {
            calls[0]++;
            if (calls[0] == 3) {
                model.rates.add(rate);
                return senderShort(rate, full, 2);
            }
            return model.measure(rate, full);
        };
        List<RateSearch.Finding> found = new RateSearch(plan(1_000_000, 40, 0.02), FULL_NS).run(starvedOnce);
        RateSearch.Finding ndr = found.get(0);
        assertThat(ndr.boundedBy()).as("%s", ndr).hasToString("path");
        assertThat(ndr.lowerBound()).isLessThanOrEqualTo(300_000).isGreaterThanOrEqualTo((long) (300_000 / 1.02));
        List<SearchTrial> trials = ndr.trials();
        assertThat(trials.get(2).verdict()).isEqualTo(SearchTrial.SENDER_LIMITED);
        assertThat(trials.get(2).outlier()).isTrue();
        assertThat(trials.get(3).rate()).as("the same rate again").isEqualTo(trials.get(2).rate());
        assertThat(trials.get(3).senderLimited()).isFalse();
    }

    /** Without a maximum, no trial goes above twice what the probe at full tilt sent. */
    @Test
    void withoutAMaximumTheSearchStaysWithinTwiceTheProbe() throws Exception {
        Model model = new Model(10_000_000, 10_000_000);
        RateSearch.Trials slowProbe = (rate, full) -> {
            if (rate == 0) {
                model.rates.add(rate);
                return new RateSearch.Measured(0, FULL_NS, 100_000, 100_000, 100_000, 0, 0, 100_000, 100_000,
                    Latency.EMPTY);
            }
            return model.measure(rate, full);
        };
        List<RateSearch.Finding> found = new RateSearch(plan(0, 40, 0.02), FULL_NS).run(slowProbe);
        assertThat(model.rates).allMatch(r -> r <= 200_000);
        assertThat(found.get(0).boundedBy()).hasToString("max");
        assertThat(found.get(0).rate()).isEqualTo(200_000);
    }
}
