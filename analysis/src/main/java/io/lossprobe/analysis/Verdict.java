package io.lossprobe.analysis;

import io.lossprobe.core.result.SearchBound;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a run answers, in a sentence per transport, before any chart: up to which level nothing was lost, where loss
 * began (the knee) and how bad it got, where the sender could not keep up, what repairs cost a reliable transport
 * when they are most of its delay, the rate searches' results, and in echo mode the transactions per second
 * reached. Plain text; the caller escapes it.
 */
public final class Verdict {
    private Verdict() {
    }

    /** The run's answer for a terminal: a line per transport (and size), as the report's verdict begins. */
    public static List<String> of(io.lossprobe.core.result.RunResult run) {
        if (run.steps().isEmpty()) {
            return List.of();
        }
        List<String> out = new ArrayList<>(lines(StepMetrics.all(run), List.of()));
        out.addAll(trafficClasses(run.steps()));
        out.addAll(receivers(run.steps(), RunLabels.multicastKind(run)));
        return out;
    }

    /**
     * A line per transport of multicast steps (docs/multicast.md): the steps' figures above are each step's worst
     * receiver's, so this says which receivers lost how much over the steps, worst first, and which lost nothing.
     */
    static List<String> receivers(List<io.lossprobe.core.result.StepResult> steps) {
        return receivers(steps, "multicast");
    }

    /** {@link #receivers(List)}, saying {@code kind} (multicast, or multi-destination-cast) of the run. */
    static List<String> receivers(List<io.lossprobe.core.result.StepResult> steps, String kind) {
        Map<String, Map<String, long[]>> byTransport = new java.util.LinkedHashMap<>();
        Map<String, Map<String, String>> gone = new java.util.LinkedHashMap<>();
        for (io.lossprobe.core.result.StepResult s : steps) {
            if (s.receivers() == null) {
                continue;
            }
            Map<String, long[]> lost = byTransport.computeIfAbsent(s.series(), t -> new java.util.LinkedHashMap<>());
            for (io.lossprobe.core.result.ReceiverResult r : s.receivers()) {
                long[] sum = lost.computeIfAbsent(r.receiver(), k -> new long[2]);
                sum[0] += r.counts().lost();
                sum[1] += r.counts().sent();
                if (r.gone() != null) {
                    gone.computeIfAbsent(s.series(), t -> new java.util.LinkedHashMap<>()).putIfAbsent(r.receiver(),
                        r.gone());
                }
            }
        }
        List<String> out = new ArrayList<>();
        byTransport.forEach((transport, lost) -> {
            List<String> lossy = new ArrayList<>();
            List<String> clean = new ArrayList<>();
            lost.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue()[0], a.getValue()[0]))
                .forEach(e -> (e.getValue()[0] == 0 ? clean : lossy).add(e.getValue()[0] == 0 ? e.getKey()
                    : String.format(Locale.ROOT, "%s lost %,d of %,d", e.getKey(), e.getValue()[0],
                    e.getValue()[1])));
            out.add(transport + ": " + kind + " to " + lost.size() + " receivers, each step's figures its worst "
                + "receiver's; " + (lossy.isEmpty() ? "" : String.join(", ", lossy) + (clean.isEmpty() ? "" : "; "))
                + (clean.isEmpty() ? "" : String.join(", ", clean) + " lost nothing")
                + gone.getOrDefault(transport, Map.of()).entrySet().stream().map(e -> "; receiver " + e.getKey()
                + " LOST to the run " + e.getValue()).collect(java.util.stream.Collectors.joining()));
        });
        return out;
    }

    /** Per-flow counter keys (after the transport's prefix, {@code udp.dscpRemarked}) of {@code --dscp} runs. */
    static final String DSCP_SENT = ".dscpSent";
    static final String DSCP_SEEN = ".dscpSeen";
    static final String DSCP_REMARKED = ".dscpRemarked";

    /**
     * With {@code --dscp}, a line per transport whose receivers read the arriving classes: the flows that arrived
     * re-marked (with the classes sent and seen), or that every flow kept its class.
     */
    static List<String> trafficClasses(List<io.lossprobe.core.result.StepResult> steps) {
        Map<String, java.util.TreeMap<Integer, long[]>> byTransport = new java.util.LinkedHashMap<>();
        for (io.lossprobe.core.result.StepResult s : steps) {
            for (io.lossprobe.core.result.FlowResult f : s.flows()) {
                Long sent = null;
                Long seen = null;
                long remarked = 0;
                for (Map.Entry<String, Long> c : f.transport().entrySet()) {
                    if (c.getKey().endsWith(DSCP_SENT)) {
                        sent = c.getValue();
                    } else if (c.getKey().endsWith(DSCP_SEEN)) {
                        seen = c.getValue();
                    } else if (c.getKey().endsWith(DSCP_REMARKED)) {
                        remarked = c.getValue();
                    }
                }
                if (sent == null || seen == null) {
                    continue; // no --dscp, or the classes were not read on this path
                }
                long[] flow = byTransport.computeIfAbsent(s.transport(), t -> new java.util.TreeMap<>())
                    .computeIfAbsent(f.flow(), k -> new long[3]);
                flow[0] = sent;
                flow[1] |= seen;
                flow[2] += remarked;
            }
        }
        List<String> out = new ArrayList<>();
        byTransport.forEach((transport, flows) -> {
            List<String> remarked = new ArrayList<>();
            java.util.Set<String> classes = new java.util.TreeSet<>();
            flows.forEach((flow, v) -> {
                int sent = (int) v[0];
                classes.add(io.lossprobe.core.plan.Dscp.name(sent));
                if (v[2] > 0) {
                    remarked.add("flow " + flow + " sent " + io.lossprobe.core.plan.Dscp.name(sent)
                        + ", arrived as " + io.lossprobe.core.plan.Dscp.names(v[1] & ~(1L << sent)));
                }
            });
            out.add(transport + ": " + (remarked.isEmpty()
                ? "every flow arrived in the class it was sent with (" + String.join(", ", classes) + ")"
                : remarked.size() + " of " + flows.size() + " flow(s) re-marked on the path: "
                + String.join("; ", remarked)));
        });
        return out;
    }

    /** One line per transport of {@code steps} (a run's steps, in run order), then one per search. */
    static List<String> lines(List<StepMetrics> steps, List<RunExtras.Search> searches) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, List<StepMetrics>> e : ReportCharts.byTransport(steps).entrySet()) {
            out.add(e.getKey() + ": " + transport(e.getValue()));
        }
        for (RunExtras.Search s : searches) {
            out.add(search(s));
        }
        return out;
    }

    static String transport(List<StepMetrics> steps) {
        List<StepMetrics> byRate = new ArrayList<>(steps);
        byRate.sort(Comparator.comparingDouble(StepMetrics::offeredRate));
        StepMetrics lastClean = null;
        StepMetrics firstLoss = null;
        StepMetrics worst = null;
        StepMetrics firstSaturated = null;
        for (StepMetrics m : byRate) {
            if (m.lost() == 0 && firstLoss == null) {
                lastClean = m;
            }
            if (m.lost() > 0 && firstLoss == null) {
                firstLoss = m;
            }
            if (m.lost() > 0 && (worst == null || m.lossPercent() > worst.lossPercent())) {
                worst = m;
            }
            if (m.saturated() && firstSaturated == null) {
                firstSaturated = m;
            }
        }
        StringBuilder sb = new StringBuilder();
        String lowest = ReportCharts.levelName(byRate.get(0));
        String highest = ReportCharts.levelName(byRate.get(byRate.size() - 1));
        if (firstLoss == null) {
            sb.append(byRate.size() == 1 ? "no loss at " + lowest
                : lowest.equals(highest) ? "no loss in " + byRate.size() + " steps at " + lowest
                : "no loss at any level (" + lowest + " to " + highest + ")");
        } else {
            if (lastClean == null) {
                sb.append("loss from the lowest level, ").append(pct(firstLoss)).append(" at ")
                    .append(ReportCharts.levelName(firstLoss));
            } else {
                sb.append("no loss up to ").append(ReportCharts.levelName(lastClean)).append("; loss from ")
                    .append(ReportCharts.levelName(firstLoss)).append(" (").append(pct(firstLoss))
                    .append("): the knee is between ").append(ReportCharts.levelName(lastClean)).append(" and ")
                    .append(ReportCharts.levelName(firstLoss));
            }
            if (worst != firstLoss) {
                sb.append("; worst ").append(pct(worst)).append(" at ").append(ReportCharts.levelName(worst));
            }
            long cleanAfterLoss = byRate.stream().dropWhile(m -> m.lost() == 0).filter(m -> m.lost() == 0).count();
            if (cleanAfterLoss > 0) {
                sb.append(" (").append(cleanAfterLoss).append(" higher level(s) lost nothing: loss came and went, "
                    + "not only with rate)");
            }
        }
        if (firstSaturated != null) {
            sb.append("; the sender fell short of the schedule from ").append(ReportCharts.levelName(firstSaturated))
                .append(String.format(Locale.ROOT, " (sent %s of %s)", ChartParts.rate(
                    firstSaturated.achievedSendRate()), ChartParts.rate(firstSaturated.offeredRate())));
        }
        timing(sb, byRate);
        hostCpu(sb, byRate);
        return sb.toString();
    }

    /** The levels at which the host's CPU was near saturation: the figures there bend with the host's strain. */
    private static void hostCpu(StringBuilder sb, List<StepMetrics> byRate) {
        List<StepMetrics> busy = byRate.stream().filter(StepMetrics::hostCpuSaturated).toList();
        if (busy.isEmpty()) {
            return;
        }
        double most = busy.stream().mapToDouble(StepMetrics::hostCpuPercent).max().orElse(Double.NaN);
        java.util.Set<String> levels = new java.util.LinkedHashSet<>();
        busy.forEach(m -> levels.add(ReportCharts.levelName(m)));
        sb.append(String.format(Locale.ROOT, "; the host's CPU was near saturation at %s (up to %.0f %% of all "
            + "cores): there delay and loss include the host's own strain", String.join(", ", levels), most));
    }

    /**
     * The timing at the highest level ({@code byRate}'s last): echo's transactions and round trip, else delay, and
     * what repairing loss cost there when the delay's tail is most of it ({@link RepairCost#dominatesDelay()}).
     */
    private static void timing(StringBuilder sb, List<StepMetrics> byRate) {
        StepMetrics top = byRate.get(byRate.size() - 1);
        if (top.echo()) {
            double bestTps = byRate.stream().mapToDouble(StepMetrics::tps).filter(v -> !Double.isNaN(v)).max()
                .orElse(Double.NaN);
            sb.append(String.format(Locale.ROOT, "; echo: up to %s transactions/s, round trip p99 %s at %s",
                ChartParts.rate(bestTps).replace("/s", ""), ChartParts.ms(top.rttMs()[2]),
                ReportCharts.levelName(top)));
        } else if (!Double.isNaN(top.p99DelayMs())) {
            sb.append("; delay p99 ").append(ChartParts.ms(top.p99DelayMs())).append(" at ")
                .append(ReportCharts.levelName(top));
            if (!Double.isNaN(top.delayUncertaintyMs())) {
                sb.append(" (+-").append(ChartParts.ms(top.delayUncertaintyMs())).append(" clock bound)");
            }
            RepairCost repair = top.repair();
            if (repair != null && repair.dominatesDelay()) {
                sb.append(", most of it the tail where repairs wait: ").append(repair.words(top.p50DelayMs()));
            }
        }
    }

    private static String pct(StepMetrics m) {
        return ChartParts.sig2(m.lossPercent()) + " %";
    }

    /** "udp NDR", "udp 1400B PDR": the transport, the size when known, the criterion as NDR and PDR are written. */
    static String searchName(RunExtras.Search s) {
        return s.transport() + (s.messageSize() > 0 ? " " + s.messageSize() + "B" : "") + " "
            + s.criterion().toUpperCase(Locale.ROOT);
    }

    static String search(RunExtras.Search s) {
        StringBuilder sb = new StringBuilder(searchName(s));
        if (!Double.isNaN(s.maxLossRatio()) && s.maxLossRatio() > 0) {
            sb.append(" (loss <= ").append(ChartParts.sig2(100 * s.maxLossRatio())).append(" %)");
        }
        if (!s.found()) {
            sb.append(": none: even the lowest rate tried").append(Double.isNaN(s.upperBound()) ? ""
                : " (" + ReportCharts.RateFormat.compact(s.upperBound()) + ")").append(" lost too much");
            return sb.toString();
        }
        sb.append(": ").append(ReportCharts.RateFormat.compact(s.rate())).append(" messages/s");
        if (!Double.isNaN(s.lowerBound()) && !Double.isNaN(s.upperBound())) {
            sb.append(", between ").append(ReportCharts.RateFormat.compact(s.lowerBound())).append(" and ")
                .append(ReportCharts.RateFormat.compact(s.upperBound()));
        }
        if (!Double.isNaN(s.lossRatio())) {
            sb.append(", loss there ").append(ChartParts.sig2(100 * s.lossRatio())).append(" %");
        }
        if (s.trials() > 0) {
            sb.append(", ").append(s.trials()).append(" trials");
        }
        if (s.boundedBy() == SearchBound.SENDER) {
            sb.append("; bounded by the sender, not the path: it could not carry more");
        } else if (s.boundedBy() == SearchBound.MAX) {
            sb.append("; passed at the search's highest rate: the path may carry more");
        } else if (s.boundedBy() == SearchBound.TRIALS || s.boundedBy() == SearchBound.STOPPED) {
            sb.append("; unfinished (").append(s.boundedBy() == SearchBound.TRIALS ? "trial budget" : "interrupted")
                .append(")");
        }
        return sb.toString();
    }
}
