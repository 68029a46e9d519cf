package io.lossprobe.analysis;

import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Environment;
import io.lossprobe.core.result.RunResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * How two runs differ in what makes their numbers comparable: the plan (ports, message size, window, warm-up,
 * drain, transports, levels, mode, send pattern, options) and where they ran (sending host, target, direction). A
 * comparison across such differences measures the difference as much as the network, so it is said loudly. Environment
 * differences (kernel, cores, JVM, lossprobe version) are listed apart: worth knowing, not a different test.
 *
 * @param plan        differences of plan and hosts, one line each ("ports: 16 (A) vs 48 (B)")
 * @param environment differences of the machines and software
 */
public record PlanDiff(List<String> plan, List<String> environment) {

    public static PlanDiff of(RunResult a, RunResult b) {
        List<String> plan = new ArrayList<>();
        List<String> env = new ArrayList<>();
        Plan pa = a.plan();
        Plan pb = b.plan();
        if (pa == null || pb == null) {
            if (pa != pb) {
                plan.add("plan: only one of the files records it");
            }
        } else {
            differ(plan, "transports", String.join(",", pa.transports()), String.join(",", pb.transports()));
            differ(plan, "ports", pa.ports(), pb.ports());
            differ(plan, "message size (bytes)", pa.messageSize(), pb.messageSize());
            differ(plan, "window", ms(pa.durationNs()), ms(pb.durationNs()));
            differ(plan, "warm-up", ms(pa.warmupNs()), ms(pb.warmupNs()));
            differ(plan, "drain (Tmax)", ms(pa.drainNs()), ms(pb.drainNs()));
            differ(plan, "levels", pa.levels().toString(), pb.levels().toString());
            differ(plan, "mode", pa.mode(), pb.mode());
            differ(plan, "concurrency", pa.concurrency(), pb.concurrency());
            differ(plan, "send pattern", pa.pattern(), pb.pattern());
            options(plan, pa.transportOptions(), pb.transportOptions());
        }
        RunLabels la = RunLabels.of(a);
        RunLabels lb = RunLabels.of(b);
        differ(plan, "target", la.target(), lb.target());
        differ(plan, "direction", la.direction(), lb.direction());
        Environment ea = a.environment();
        Environment eb = b.environment();
        if (ea != null && eb != null) {
            differ(plan, "sending host", ea.host(), eb.host());
            differ(env, "kernel", ea.kernel(), eb.kernel());
            differ(env, "cores", ea.cores(), eb.cores());
            differ(env, "JVM", ea.jvm(), eb.jvm());
            differ(env, "lossprobe", ea.lossprobeVersion(), eb.lossprobeVersion());
        }
        return new PlanDiff(List.copyOf(plan), List.copyOf(env));
    }

    public boolean plansDiffer() {
        return !plan.isEmpty();
    }

    private static void differ(List<String> out, String what, Object a, Object b) {
        if (!Objects.equals(a, b)) {
            out.add(what + ": " + a + " (A) vs " + b + " (B)");
        }
    }

    private static void options(List<String> out, Map<String, String> a, Map<String, String> b) {
        for (String k : new TreeSet<>(concat(a.keySet(), b.keySet()))) {
            String va = a.get(k);
            String vb = b.get(k);
            if (!Objects.equals(va, vb)) {
                out.add("option " + k + ": " + (va == null ? "not set" : va) + " (A) vs "
                    + (vb == null ? "not set" : vb) + " (B)");
            }
        }
    }

    private static List<String> concat(java.util.Set<String> a, java.util.Set<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static String ms(long ns) {
        return ChartParts.plain(ns / 1e6) + " ms";
    }
}
