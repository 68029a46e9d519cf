package io.lossprobe.core.search;

import io.lossprobe.core.plan.SearchPlan;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.SearchBound;
import io.lossprobe.core.result.SearchTrial;
import io.lossprobe.core.result.SenderLimit;
import io.lossprobe.core.search.CriterionBounds.Verdict;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The search for the highest rate within each loss criterion (NDR: no loss; PDR: loss ratio at most a threshold),
 * after RFC 2544's throughput and the IETF's MLRsearch, kept simple enough to explain in a paragraph
 * (docs/search.md):
 *
 * <ol>
 *   <li>Short trials first, then full-length ones. Each phase keeps, per criterion, the highest rate that passed
 *   (lower bound) and the lowest that failed (upper bound); the next trial halves the gap geometrically. With only
 *   one bound, it steps out from it: up by a width that doubles each time (halving the gap instead towards a rate
 *   the sender could not carry); down to just under the rate the path forwarded at the failing trial, or, when that
 *   trial lost less than the precision, by a doubling width. A phase ends for a criterion when upper / lower - 1 is
 *   at most the precision. The full-length phase starts from the short phase's bounds.</li>
 *   <li>Trials are shared: one trial judges every criterion.</li>
 *   <li>A trial whose sender fell more than 1 % short of the rate (behind its schedule, or refused by its own host)
 *   is sender-limited: it says nothing about the path unless the path lost too much anyway. The search never goes
 *   above the lowest sender-limited rate, and a criterion that passes within the precision of it is reported as
 *   bounded by the sender, not the path. The first trial the sender fell short at so low is repeated once at once
 *   (a sender starved for a moment by another process says nothing about its speed); only a repeat that falls short
 *   too makes the rate the sender's ceiling, else the first is kept as an outlier.</li>
 *   <li>Noise: a full-length trial that fails a criterion by little (at most twice the loss it allows; for NDR, at
 *   most 10 messages lost) is repeated once at once; the rate fails only if the repeat fails too, else the first
 *   is kept as an outlier.</li>
 * </ol>
 *
 * Nothing here measures: {@link Trials} does. Not thread-safe.
 */
public final class RateSearch {
    /** Runs one trial; returns null when the run was stopped. */
    @FunctionalInterface
    public interface Trials {
        /**
         * @param rate messages/s over all flows; 0 = as fast as the sender goes
         * @param full a full-length trial (else a short one)
         */
        Measured measure(long rate, boolean full) throws Exception;
    }

    /**
     * What one trial measured.
     *
     * @param senderLimit why the sender fell short, with its figures (null: not known)
     */
    public record Measured(long rate, long windowNs, long scheduled, long sent, long received, long sendFailed,
                           long behind, double achievedSendRate, double achievedReceiveRate, Latency delay,
                           SenderLimit senderLimit) {
        /** A trial without the sender's reasons. */
        public Measured(long rate, long windowNs, long scheduled, long sent, long received, long sendFailed,
                        long behind, double achievedSendRate, double achievedReceiveRate, Latency delay) {
            this(rate, windowNs, scheduled, sent, received, sendFailed, behind, achievedSendRate,
                achievedReceiveRate, delay, null);
        }

        public long lost() {
            return sent - received;
        }

        public double lossRatio() {
            return sent == 0 ? 0 : (double) lost() / sent;
        }

        /** The sender fell more than 1 % short of the schedule: the path was never offered the rate. */
        public boolean senderLimited() {
            return rate > 0 && (sent == 0 || 100 * (behind + sendFailed) > scheduled);
        }
    }

    /**
     * One criterion's finding.
     *
     * @param senderLimit when bounded by the sender: why it fell short at the rate it could not carry (null
     *                    otherwise, or not known)
     */
    public record Finding(String criterion, double maxLossRatio, Long rate, Long lowerBound, Long upperBound,
                          Double lossRatio, Double width, boolean converged, SearchBound boundedBy,
                          List<SearchTrial> trials, SenderLimit senderLimit) {
    }

    static final String PROBE = "probe";
    /** Without a maximum, the search goes no higher than this many times the probe's rate at full tilt. */
    static final long PROBE_HEADROOM = 2;
    static final String SHORT = "short";
    static final String FULL = "full";
    /** Share of the trial budget the short phase may use when there is a full-length phase after it. */
    static final double SHORT_SHARE = 0.6;
    /** A failure is marginal (repeated once) at most this many times the loss its criterion allows... */
    static final double MARGINAL_FACTOR = 2;
    /** ...or, for NDR (which allows none), at most this many messages lost. */
    static final long MARGINAL_NDR_LOST = 10;

    private final SearchPlan plan;
    private final boolean twoPhases;
    private final TrialLog trials = new TrialLog();
    private final Map<String, CriterionBounds> bounds = new LinkedHashMap<>();
    private final SenderCeiling ceiling = new SenderCeiling();
    private final NextRate nextRate;
    private boolean stopped;
    private java.util.function.BiConsumer<SearchTrial, Map<String, String>> onTrial = (t, v) -> { };

    /** @param fullTrialNs the full-length trials' window (the plan's duration) */
    public RateSearch(SearchPlan plan, long fullTrialNs) {
        this.plan = plan;
        this.twoPhases = plan.shortTrialNs() < fullTrialNs;
        this.nextRate = new NextRate(plan, ceiling);
        for (String c : plan.criteria()) {
            bounds.put(c, new CriterionBounds(c, plan.lossRatio(c)));
        }
    }

    /** Told of every trial as it is measured: the trial (as the first criterion judged it) and every verdict. */
    public RateSearch onTrial(java.util.function.BiConsumer<SearchTrial, Map<String, String>> listener) {
        this.onTrial = listener;
        return this;
    }

    /** Runs the search; the findings in the order of the plan's criteria (unfinished ones say so). */
    public List<Finding> run(Trials measure) throws Exception {
        long cap = plan.maxRate() > 0 ? plan.maxRate() : Long.MAX_VALUE;
        if (plan.maxRate() == 0) {
            // No maximum given: one full-length trial at full tilt says roughly how fast this sender goes and, when
            // the path lost there, how much it forwarded. A hint where to start, never a bound: unpaced sending is
            // burstier than paced, and a cold start slower.
            Measured probe = trial(measure, 0, true, PROBE);
            if (probe == null) {
                return findings();
            }
            long fastest = Math.max(plan.minRate(), (long) Math.floor(probe.achievedSendRate()));
            // Paced sending may beat the burst at full tilt, but not by much: twice it is the search's maximum.
            cap = Math.max(plan.minRate(), Math.min(Long.MAX_VALUE / 4, fastest) * PROBE_HEADROOM);
            for (CriterionBounds b : bounds.values()) {
                b.hint = probe.lossRatio() > b.allowed
                    ? Math.max(plan.minRate(), (long) Math.floor(probe.achievedReceiveRate())) : fastest;
            }
        }
        int budgetLeft = plan.maxTrials() - trials.size();
        if (twoPhases) {
            int shortBudget = (int) Math.ceil(SHORT_SHARE * plan.maxTrials()) - trials.size();
            phase(measure, SHORT, false, cap, Math.max(1, shortBudget));
            for (CriterionBounds b : bounds.values()) {
                b.carryOver();
            }
            budgetLeft = plan.maxTrials() - trials.size();
        }
        if (!stopped) {
            phase(measure, FULL, true, cap, budgetLeft);
        }
        return findings();
    }

    private void phase(Trials measure, String phase, boolean full, long maxCap, int budget)
        throws Exception {
        for (CriterionBounds b : bounds.values()) {
            b.reset();
        }
        int used = 0;
        while (used < budget && !stopped) {
            CriterionBounds b = null;
            Long rate = null;
            for (CriterionBounds candidate : bounds.values()) {
                rate = candidate.done ? null : nextRate.next(candidate, maxCap);
                if (rate != null) {
                    b = candidate;
                    break;
                }
            }
            if (b == null) {
                return;
            }
            Measured m = trial(measure, rate, full, phase);
            used++;
            if (m == null) {
                return;
            }
            if (firstShortfallAt(m) && used < budget) {
                Measured again = trial(measure, rate, full, phase);
                used++;
                if (again == null) {
                    return;
                }
                if (!again.senderLimited()) {
                    trials.repeated().setAside(bounds.keySet());
                }
                m = again;
            }
            List<CriterionBounds> marginal = full ? marginalFailures(m) : List.of();
            if (!marginal.isEmpty() && used < budget) {
                Measured again = trial(measure, rate, true, phase);
                used++;
                if (again == null) {
                    return;
                }
                judgeRepeat(marginal, m, again);
            } else {
                for (CriterionBounds all : bounds.values()) {
                    update(all, m);
                }
            }
        }
    }

    /**
     * A full-length trial {@code m} failed the {@code marginal} criteria by little and was repeated ({@code again}):
     * it is an outlier for each of them the repeat does not fail; the other criteria are judged by it, every
     * criterion by the repeat.
     */
    private void judgeRepeat(List<CriterionBounds> marginal, Measured m, Measured again) {
        TrialLog.Trial first = trials.repeated();
        for (CriterionBounds mb : marginal) {
            if (mb.verdict(again) != Verdict.FAIL) {
                first.outliers.put(mb.criterion, true);
            }
        }
        for (CriterionBounds other : bounds.values()) {
            if (!marginal.contains(other)) {
                update(other, m);
            }
        }
        for (CriterionBounds all : bounds.values()) {
            update(all, again);
        }
    }

    /**
     * Whether {@code m} is the first trial the sender fell short at this low: a sender starved for a moment (another
     * process on its CPU, a cold start) says nothing about its speed, so the rate is tried once more at once, and
     * only a second shortfall makes it the sender's ceiling. A trial that failed on loss anyway is not repeated.
     */
    private boolean firstShortfallAt(Measured m) {
        return m.rate() > 0 && m.rate() < ceiling.rate()
            && bounds.values().stream().anyMatch(b -> b.verdict(m) == Verdict.SENDER_LIMITED);
    }

    /** The criteria {@code m} fails by little (see the class's noise rule). */
    private List<CriterionBounds> marginalFailures(Measured m) {
        List<CriterionBounds> out = new ArrayList<>();
        for (CriterionBounds b : bounds.values()) {
            if (b.verdict(m) == Verdict.FAIL) {
                double allowedLost = b.allowed * m.sent();
                boolean small = b.allowed == 0 ? m.lost() <= MARGINAL_NDR_LOST
                    : m.lost() <= MARGINAL_FACTOR * allowedLost;
                if (small) {
                    out.add(b);
                }
            }
        }
        return out;
    }

    private void update(CriterionBounds b, Measured m) {
        if (m.rate() == 0) {
            return;
        }
        Verdict v = b.verdict(m);
        if (v == Verdict.SENDER_LIMITED) {
            ceiling.fellShortAt(m);
        } else if (v == Verdict.PASS) {
            if (b.upper == null || m.rate() < b.upper) {
                if (b.lower == null || m.rate() >= b.lower) {
                    b.lower = m.rate();
                    b.atLower = m;
                }
            }
        } else {
            if (b.lower == null || m.rate() > b.lower) {
                if (b.upper == null || m.rate() <= b.upper) {
                    b.upper = m.rate();
                    b.atUpper = m;
                }
            }
        }
    }

    private Measured trial(Trials measure, long rate, boolean full, String phase) throws Exception {
        Measured m = measure.measure(rate, full);
        if (m == null) {
            stopped = true;
            return null;
        }
        trials.add(m, phase);
        List<SearchTrial> judged = trials(plan.criteria().get(0));
        onTrial.accept(judged.get(judged.size() - 1), verdicts(m));
        return m;
    }

    /** The trials so far, as {@code criterion} judged them. */
    public List<SearchTrial> trials(String criterion) {
        return trials.judged(bounds.get(criterion), criterion);
    }

    /** How each criterion judged the latest trial. */
    public Map<String, String> verdicts(Measured m) {
        Map<String, String> out = new LinkedHashMap<>();
        for (CriterionBounds b : bounds.values()) {
            Verdict v = b.verdict(m);
            out.put(b.criterion, v.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
        }
        return out;
    }

    private List<Finding> findings() {
        List<Finding> out = new ArrayList<>();
        for (CriterionBounds b : bounds.values()) {
            Long upper = b.upper;
            SearchBound boundedBy = b.boundedBy;
            if (!b.done) {
                boundedBy = stopped ? SearchBound.STOPPED : SearchBound.TRIALS;
            }
            if (boundedBy == SearchBound.SENDER) {
                upper = ceiling.rate() == Long.MAX_VALUE ? upper : Long.valueOf(ceiling.rate());
            } else if (boundedBy == SearchBound.MAX) {
                upper = null;
            }
            Double width = b.lower != null && upper != null ? (double) upper / b.lower - 1 : null;
            out.add(new Finding(b.criterion, b.allowed, b.lower, b.lower, upper,
                b.atLower == null ? null : b.atLower.lossRatio(), width, b.done, boundedBy, trials(b.criterion),
                boundedBy == SearchBound.SENDER ? ceiling.limit() : null));
        }
        return out;
    }
}
