package io.lossprobe.analysis;

import java.util.List;

/**
 * The outcome of checking one run against a policy: every limit evaluated, passed or not.
 *
 * @param run         the checked result
 * @param baseline    the baseline it was compared with, or null
 * @param evaluations every limit that applied, in step order
 */
public record CheckReport(LoadedResult run, LoadedResult baseline, List<Evaluation> evaluations) {

    /**
     * One limit applied to one transport and level.
     *
     * @param transport {@code *} for run-wide checks (status)
     * @param level     {@code *} for run-wide checks
     * @param metric    the policy key ({@code maxLossPercent}, ...) or {@code baseline.<metric>}
     * @param value     what the run measured (NaN when not measurable)
     * @param limit     the limit
     * @param passed    whether the value is within the limit
     * @param message   one line for people: transport, level, metric, value and limit
     */
    public record Evaluation(String transport, String level, String metric, double value, double limit,
                             boolean passed, String message) {
    }

    public CheckReport {
        evaluations = List.copyOf(evaluations);
    }

    public boolean passed() {
        return evaluations.stream().allMatch(Evaluation::passed);
    }

    public List<Evaluation> failures() {
        return evaluations.stream().filter(e -> !e.passed()).toList();
    }
}
