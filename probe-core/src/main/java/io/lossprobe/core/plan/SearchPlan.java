package io.lossprobe.core.plan;

import java.util.List;
import java.util.Locale;

/**
 * A rate search's settings ({@code run --search ndr,pdr}): which criteria, the loss PDR allows, the precision to
 * stop at, the rates to search between, the short trials' length and the budget. The search method and its
 * stopping rule are in docs/search.md.
 *
 * @param criteria         {@value #NDR} (no loss) and/or {@value #PDR} (loss ratio at most {@code pdrLossRatio}),
 *                         in the order given
 * @param pdrLossRatio     the loss ratio PDR allows, as a fraction (0.005 = 0.5 %)
 * @param precision        the relative width goal: a criterion is found when upper / lower - 1 is at most this
 * @param minRate          the lowest rate tried (messages/s over all flows)
 * @param maxRate          the highest rate tried; 0 = as fast as the sender goes (the first trial sends at max)
 * @param shortTrialNs     the short trials' window; equal to the plan's duration for full-length trials only
 * @param maxTrials        trials one search may take (per transport and message size) before it stops unfinished
 * @param latencyFractions fractions of the PDR (of the NDR when PDR is not searched) at which a full step is
 *                         measured after the search, for its delay; empty for none
 */
public record SearchPlan(List<String> criteria, double pdrLossRatio, double precision, long minRate, long maxRate,
                         long shortTrialNs, int maxTrials, List<Double> latencyFractions) {
    public static final String NDR = "ndr";
    public static final String PDR = "pdr";
    public static final double DEFAULT_PDR_LOSS_RATIO = 0.005;
    public static final double DEFAULT_PRECISION = 0.02;
    public static final int DEFAULT_MAX_TRIALS = 40;
    /** The most trials a search may be allowed: each is a step, and steps are numbered in 16 bits. */
    public static final int MAX_TRIALS = 1_000;
    /** The highest rate a search may try: a billion messages a second. */
    public static final long MAX_RATE = 1_000_000_000L;

    public SearchPlan {
        criteria = List.copyOf(criteria == null ? List.of() : criteria);
        latencyFractions = List.copyOf(latencyFractions == null ? List.of() : latencyFractions);
        if (criteria.isEmpty()) {
            throw new IllegalArgumentException("--search needs ndr, pdr or both");
        }
        for (String c : criteria) {
            if (!NDR.equals(c) && !PDR.equals(c)) {
                throw new IllegalArgumentException("--search takes ndr and pdr, not '" + c + "'");
            }
        }
        if (criteria.stream().distinct().count() != criteria.size()) {
            throw new IllegalArgumentException("--search names a criterion twice: " + String.join(",", criteria));
        }
        if (!(pdrLossRatio > 0 && pdrLossRatio < 1)) {
            throw new IllegalArgumentException("--pdr-loss must be above 0 % and below 100 %, got "
                + percent(pdrLossRatio));
        }
        if (!(precision > 0 && precision <= 1)) {
            throw new IllegalArgumentException("--search-precision must be above 0 % and at most 100 %, got "
                + percent(precision));
        }
        if (minRate < 1) {
            throw new IllegalArgumentException("--search-min must be at least 1 message/s");
        }
        if (maxRate > MAX_RATE || minRate > MAX_RATE) {
            throw new IllegalArgumentException("--search-min and --search-max must be at most 1G messages/s");
        }
        if (maxRate != 0 && maxRate < minRate) {
            throw new IllegalArgumentException("--search-max " + maxRate + " is below --search-min " + minRate);
        }
        if (shortTrialNs <= 0) {
            throw new IllegalArgumentException("--search-trial must be greater than 0");
        }
        if (maxTrials < 2 || maxTrials > MAX_TRIALS) {
            throw new IllegalArgumentException("--search-trials must be between 2 and " + MAX_TRIALS);
        }
        for (Double f : latencyFractions) {
            if (f == null || !(f > 0 && f <= 1)) {
                throw new IllegalArgumentException("--latency-at takes fractions of the PDR above 0 % and at most "
                    + "100 %");
            }
        }
    }

    public boolean has(String criterion) {
        return criteria.contains(criterion);
    }

    /** The loss ratio {@code criterion} allows. */
    public double lossRatio(String criterion) {
        return NDR.equals(criterion) ? 0 : pdrLossRatio;
    }

    /** Steps one search takes at most: its trials and the latency steps after it. */
    public int steps() {
        return maxTrials + latencyFractions.size();
    }

    static String percent(double ratio) {
        return String.format(Locale.ROOT, "%s %%", java.math.BigDecimal.valueOf(ratio * 100).stripTrailingZeros()
            .toPlainString());
    }
}
