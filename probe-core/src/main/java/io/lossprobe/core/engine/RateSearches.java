package io.lossprobe.core.engine;

import io.lossprobe.core.pacing.NanoClock;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.plan.SearchPlan;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.SearchResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.search.RateSearch;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs a pass's rate search on the engine's steps ({@link RateSearch} decides, this measures): every trial a step of
 * its own (numbered on from the pass's levels, never kept in the result's steps), then the steps at fractions of the
 * PDR, which are kept.
 */
final class RateSearches {
    /** The shortest drain a short trial gets: stragglers after it count as lost, as after any step's. */
    static final long MIN_SHORT_DRAIN_NS = TimeUnit.MILLISECONDS.toNanos(200);

    private RateSearches() {
    }

    /** Short trials warm up and drain no longer than they measure (the plan's when that is shorter). */
    static StepTiming shortTiming(Plan pass) {
        long trial = pass.search().shortTrialNs();
        return new StepTiming(Math.min(pass.warmupNs(), trial), trial,
            Math.min(pass.drainNs(), Math.max(trial, MIN_SHORT_DRAIN_NS)));
    }

    /** Returns the next free step number. */
    static int run(Plan pass, String transport, int firstStep, RunEngine.Steps steps, RunListener listener,
                   Consumer<List<SearchResult>> found, NanoClock clock) throws Exception {
        SearchPlan sp = pass.search();
        int[] step = {firstStep};
        long start = clock.nanoTime();
        StepTiming full = StepTiming.of(pass);
        StepTiming brief = shortTiming(pass);
        RateSearch search = new RateSearch(sp, pass.durationNs())
            .onTrial((trial, verdicts) -> listener.trialFinished(transport, pass.messageSize(), trial, verdicts));
        List<RateSearch.Finding> findings = search.run((rate, isFull) -> {
            if (steps.stopped()) {
                return null;
            }
            StepResult r = steps.measure(step[0]++, rate == 0 ? Level.MAX : Level.of(rate), isFull ? full : brief,
                false);
            if (r == null) {
                return null;
            }
            Counts c = r.counts();
            return new RateSearch.Measured(rate, r.windowNs(), c.scheduled(), c.sent(), c.received(),
                c.sendFailed(), c.behind(), r.achievedSendRate(), r.achievedReceiveRate(), r.delay(),
                r.senderLimit());
        });
        long searchNs = clock.nanoTime() - start;
        List<SearchResult> results = new ArrayList<>();
        for (RateSearch.Finding f : findings) {
            results.add(new SearchResult(transport, pass.messageSize(), f.criterion(), f.maxLossRatio(), f.rate(),
                f.lowerBound(), f.upperBound(), f.lossRatio(), sp.precision(), f.width(), f.converged(),
                f.boundedBy(), searchNs, f.trials(), null, f.senderLimit()));
        }
        step[0] = latencySteps(pass, results, steps, step[0]);
        found.accept(results);
        listener.searchFinished(results);
        return step[0];
    }

    /**
     * Full steps at the search's fractions of the PDR (of the NDR without a PDR), kept as steps; the entry they
     * belong to lists them.
     */
    private static int latencySteps(Plan pass, List<SearchResult> results, RunEngine.Steps steps, int step)
        throws Exception {
        SearchPlan sp = pass.search();
        if (sp.latencyFractions().isEmpty()) {
            return step;
        }
        int base = -1;
        for (int i = 0; i < results.size(); i++) {
            if (results.get(i).rate() != null
                && (base < 0 || SearchPlan.PDR.equals(results.get(i).criterion()))) {
                base = i;
            }
        }
        if (base < 0) {
            return step;
        }
        long rate = results.get(base).rate();
        List<SearchResult.LatencyStep> measured = new ArrayList<>();
        for (double fraction : sp.latencyFractions()) {
            if (steps.stopped()) {
                break;
            }
            long at = Math.max(sp.minRate(), Math.round(fraction * rate));
            StepResult r = steps.measure(step, Level.of(at), StepTiming.of(pass), true);
            if (r == null) {
                break;
            }
            measured.add(new SearchResult.LatencyStep(fraction, at, step));
            step++;
        }
        results.set(base, results.get(base).withLatencySteps(measured));
        return step;
    }
}
