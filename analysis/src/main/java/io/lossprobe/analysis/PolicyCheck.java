package io.lossprobe.analysis;

import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.result.StepResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Checks a run against a {@link Policy}: each step against the thresholds for its transport and level, then each
 * step against the same step of a baseline run within the policy's tolerance. Pure: reads nothing, writes nothing,
 * so {@code lossprobe check} and {@code lossprobe run --policy} share it.
 */
public final class PolicyCheck {
    private final Policy policy;

    public PolicyCheck(Policy policy) {
        this.policy = policy;
    }

    public CheckReport check(LoadedResult run, Optional<LoadedResult> baseline) {
        List<CheckReport.Evaluation> out = new ArrayList<>();
        RunStatus status = run.run().status();
        if (policy.completeRequired()) {
            boolean complete = status == RunStatus.COMPLETE;
            out.add(new CheckReport.Evaluation("*", "*", "status", complete ? 1 : 0, 1, complete,
                "run status is " + status + (complete ? "" : " (policy requires complete)")
                    + (run.run().error() == null ? "" : ": " + run.run().error())));
        }
        boolean anySteps = !run.run().steps().isEmpty();
        out.add(new CheckReport.Evaluation("*", "*", "steps", run.run().steps().size(), 1, anySteps,
            anySteps ? run.run().steps().size() + " steps" : "the run has no steps"));
        for (StepResult s : run.run().steps()) {
            int first = out.size();
            StepMetrics m = StepMetrics.of(run.run(), s);
            // A direction's series ("udp reverse") takes its transport's thresholds.
            Policy.Thresholds t = policy.thresholdsFor(m.transport().split(" ", 2)[0], m.level());
            atMost(out, m, "maxLossPercent", m.lossPercent(), t.maxLossPercent(), "%", 4);
            atLeast(out, m, "minAchievedRate", m.achievedRate(), t.minAchievedRate(), " msg/s", 0);
            if (t.minAchievedPercentOfTarget() != null && m.targetRate() > 0) {
                atLeast(out, m, "minAchievedPercentOfTarget", 100.0 * m.achievedRate() / m.targetRate(),
                    t.minAchievedPercentOfTarget(), "%", 2);
            }
            atMost(out, m, "maxP99DelayMs", m.p99DelayMs(), t.maxP99DelayMs(), " ms", 3);
            atMost(out, m, "maxRetransmitsPer1k", m.retransmitsPer1k(), t.maxRetransmitsPer1k(), "", 3);
            atMost(out, m, "maxNaksPer1k", m.naksPer1k(), t.maxNaksPer1k(), "", 3);
            worstReceiver(out, first, s);
            goneReceivers(out, m, s);
        }
        baseline.ifPresent(b -> compare(out, run, b));
        return new CheckReport(run, baseline.orElse(null), out);
    }

    private void compare(List<CheckReport.Evaluation> out, LoadedResult run, LoadedResult base) {
        Comparison.Tolerance tol = policy.baseline() != null ? policy.baseline().tolerance()
            : Comparison.Tolerance.DEFAULT;
        for (StepResult s : run.run().steps()) {
            Optional<StepResult> old = base.stepLike(s);
            if (old.isEmpty()) {
                continue;
            }
            StepMetrics a = StepMetrics.of(base.run(), old.get());
            StepMetrics b = StepMetrics.of(run.run(), s);
            List<Comparison.Regression> found = Comparison.regressions(a, b, tol);
            for (String metric : List.of("lossPercent", "achievedRate", "p99DelayMs")) {
                Optional<Comparison.Regression> r = found.stream().filter(x -> x.metric().equals(metric)).findFirst();
                double value = switch (metric) {
                    case "lossPercent" -> b.lossPercent();
                    case "achievedRate" -> b.achievedRate();
                    default -> b.p99DelayMs();
                };
                double was = switch (metric) {
                    case "lossPercent" -> a.lossPercent();
                    case "achievedRate" -> a.achievedRate();
                    default -> a.p99DelayMs();
                };
                out.add(new CheckReport.Evaluation(b.transport(), b.level(), "baseline." + metric, value, was,
                    r.isEmpty(), b.transport() + " " + b.level() + " baseline." + metric + ": "
                        + r.map(Comparison.Regression::detail).orElse("within tolerance of the baseline")
                        + " (baseline " + base.file() + ")"));
            }
        }
    }

    /**
     * A multicast step's figures are its worst receiver's (docs/multicast.md): its lines from {@code first} on say
     * which receiver that is, so a failure names the receiver that broke the limit.
     */
    private static void worstReceiver(List<CheckReport.Evaluation> out, int first, StepResult s) {
        if (s.worstReceiver() == null) {
            return;
        }
        for (int i = first; i < out.size(); i++) {
            CheckReport.Evaluation e = out.get(i);
            out.set(i, new CheckReport.Evaluation(e.transport(), e.level(), e.metric(), e.value(), e.limit(),
                e.passed(), e.message() + " (multicast: worst receiver " + s.worstReceiver()
                    + (s.receivers() == null ? "" : " of " + s.receivers().size()) + ")"));
        }
    }

    /**
     * A multicast step that lost receivers (docs/multicast.md#a-receiver-that-is-lost) fails whatever the policy's
     * thresholds: the receivers that take part were measured, the gone ones were not.
     */
    private static void goneReceivers(List<CheckReport.Evaluation> out, StepMetrics m, StepResult s) {
        if (s.receivers() == null) {
            return;
        }
        List<String> gone = new ArrayList<>();
        for (io.lossprobe.core.result.ReceiverResult r : s.receivers()) {
            if (r.gone() != null) {
                gone.add(r.receiver() + " (" + r.gone() + ")");
            }
        }
        if (!gone.isEmpty()) {
            out.add(new CheckReport.Evaluation(m.transport(), m.level(), "receivers", gone.size(), 0, false,
                m.transport() + " " + m.level() + " receivers: " + gone.size() + " of " + s.receivers().size()
                    + " gone, everything sent counted lost to " + (gone.size() == 1 ? "it" : "them") + ": "
                    + String.join("; ", gone)));
        }
    }

    private static void atMost(List<CheckReport.Evaluation> out, StepMetrics m, String metric, double value,
                               Double limit, String unit, int decimals) {
        if (limit == null || Double.isNaN(value)) {
            return;
        }
        boolean ok = value <= limit;
        out.add(new CheckReport.Evaluation(m.transport(), m.level(), metric, value, limit, ok,
            describe(m, metric, value, ok ? "<=" : ">", limit, unit, decimals)));
    }

    private static void atLeast(List<CheckReport.Evaluation> out, StepMetrics m, String metric, double value,
                                Double limit, String unit, int decimals) {
        if (limit == null || Double.isNaN(value)) {
            return;
        }
        boolean ok = value >= limit;
        out.add(new CheckReport.Evaluation(m.transport(), m.level(), metric, value, limit, ok,
            describe(m, metric, value, ok ? ">=" : "<", limit, unit, decimals)));
    }

    private static String describe(StepMetrics m, String metric, double value, String op, double limit,
                                   String unit, int decimals) {
        return String.format(Locale.ROOT, "%s %s %s: %s%s %s limit %s%s", m.transport(), m.level(), metric,
            Fmt.num(value, decimals), unit, op, Fmt.num(limit, decimals), unit);
    }
}
