package io.lossprobe.analysis;

import io.lossprobe.core.result.StepResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Two runs side by side, per transport and level, with deltas. A row is a regression when loss rose by more than
 * {@link Tolerance#lossPercentPoints()}, the achieved rate fell by more than {@link Tolerance#achievedPercent()}
 * percent, or p99 delay rose by more than {@link Tolerance#p99Percent()} percent.
 */
public final class Comparison {

    /**
     * How much worse B may be than A before it counts as a regression.
     *
     * @param lossPercentPoints allowed rise of loss %, in percentage points (0.1 = from 0.0 % to 0.1 %)
     * @param achievedPercent   allowed fall of the achieved rate, in percent of A's
     * @param p99Percent        allowed rise of p99 delay, in percent of A's
     */
    public record Tolerance(double lossPercentPoints, double achievedPercent, double p99Percent) {
        public static final Tolerance DEFAULT = new Tolerance(0.1, 5.0, 50.0);

        public Tolerance {
            if (lossPercentPoints < 0 || achievedPercent < 0 || p99Percent < 0) {
                throw new IllegalArgumentException("tolerances must not be negative");
            }
        }
    }

    /**
     * One way B is worse than A.
     *
     * @param metric {@code lossPercent}, {@code achievedRate} or {@code p99DelayMs}
     * @param detail in words, with both values and the tolerance
     */
    public record Regression(String metric, String detail) {
        @Override
        public String toString() {
            return detail;
        }
    }

    /** One transport and level in both runs; {@code a} or {@code b} is null where that run lacks the step. */
    public record Row(String transport, String level, StepMetrics a, StepMetrics b, List<Regression> regressions) {
        public boolean regressed() {
            return !regressions.isEmpty();
        }
    }

    private final List<Row> rows;

    private Comparison(List<Row> rows) {
        this.rows = List.copyOf(rows);
    }

    public static Comparison of(LoadedResult a, LoadedResult b, Tolerance tolerance) {
        List<Row> rows = new ArrayList<>();
        boolean sized = a.sized() || b.sized();
        for (StepResult sa : a.run().steps()) {
            String level = label(sa, sized);
            Optional<StepResult> sb = b.stepLike(sa);
            StepMetrics ma = StepMetrics.of(a.run(), sa);
            StepMetrics mb = sb.map(x -> StepMetrics.of(b.run(), x)).orElse(null);
            rows.add(new Row(sa.transport(), level, ma, mb, mb == null ? List.of() : regressions(ma, mb, tolerance)));
        }
        for (StepResult sb : b.run().steps()) {
            if (a.stepLike(sb).isEmpty()) {
                rows.add(new Row(sb.transport(), label(sb, sized), null, StepMetrics.of(b.run(), sb), List.of()));
            }
        }
        return new Comparison(rows);
    }

    /** The level as a row names it: with the message size when a run stepped through several. */
    static String label(StepResult s, boolean sized) {
        return s.level() + (sized && s.messageSize() != null ? " " + s.messageSize() + "B" : "");
    }

    /** What got worse from {@code a} to {@code b} beyond the tolerance, in words ("loss % 0.00 -> 1.20"). */
    public static List<Regression> regressions(StepMetrics a, StepMetrics b, Tolerance t) {
        List<Regression> found = new ArrayList<>();
        if (b.lossPercent() - a.lossPercent() > t.lossPercentPoints()) {
            found.add(new Regression("lossPercent",
                    String.format(java.util.Locale.ROOT, "loss %% up %.4f -> %.4f (tolerance +%s points)",
                a.lossPercent(), b.lossPercent(), Fmt.num(t.lossPercentPoints(), 3))));
        }
        if (a.achievedRate() > 0 && 100.0 * (a.achievedRate() - b.achievedRate()) / a.achievedRate()
            > t.achievedPercent()) {
            found.add(new Regression("achievedRate",
                    String.format(java.util.Locale.ROOT, "achieved down %.0f -> %.0f msg/s (tolerance -%s%%)",
                a.achievedRate(), b.achievedRate(), Fmt.num(t.achievedPercent(), 1))));
        }
        if (!Double.isNaN(a.p99DelayMs()) && !Double.isNaN(b.p99DelayMs()) && a.p99DelayMs() > 0
            && 100.0 * (b.p99DelayMs() - a.p99DelayMs()) / a.p99DelayMs() > t.p99Percent()) {
            found.add(new Regression("p99DelayMs",
                    String.format(java.util.Locale.ROOT, "p99 up %.3f -> %.3f ms (tolerance +%s%%)",
                a.p99DelayMs(), b.p99DelayMs(), Fmt.num(t.p99Percent(), 1))));
        }
        return found;
    }

    public List<Row> rows() {
        return rows;
    }

    public boolean anyRegression() {
        return rows.stream().anyMatch(Row::regressed);
    }
}
