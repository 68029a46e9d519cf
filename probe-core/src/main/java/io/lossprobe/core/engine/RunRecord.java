package io.lossprobe.core.engine;

import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Environment;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.result.SearchResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.CounterDescriptor;
import io.lossprobe.core.transport.Transport;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The run's result as it accumulates: the completed steps (whose late arrivals go on counting until their
 * receivers close), the searches' findings and the sockets' buffer sizes. Not thread-safe: the engine guards it.
 */
final class RunRecord {
    private final Plan plan;
    private final Map<String, Transport> transports;
    private final List<CompletedStep> completed = new ArrayList<>();
    private final List<SearchResult> searches = new ArrayList<>();
    private final Map<String, Long> socketBuffers = new HashMap<>();
    private final String startedAt = Instant.now().toString();

    RunRecord(Plan plan, Map<String, Transport> transports) {
        this.plan = plan;
        this.transports = transports;
    }

    /** How many steps are complete: where a pass's steps begin. */
    int steps() {
        return completed.size();
    }

    void add(CompletedStep step) {
        completed.add(step);
    }

    /** The receivers of the steps from {@code first} on close now: those steps keep the late counts they reached. */
    void freezeFrom(int first) {
        for (CompletedStep c : completed.subList(first, completed.size())) {
            c.freeze();
        }
    }

    /** The results of the steps from {@code first} on, as frozen. */
    List<StepResult> frozenFrom(int first) {
        List<StepResult> out = new ArrayList<>();
        for (CompletedStep c : completed.subList(first, completed.size())) {
            out.add(c.withLateSoFar());
        }
        return out;
    }

    void addSearches(List<SearchResult> found) {
        searches.addAll(found);
    }

    /** One side's socket settings, e.g. buffer sizes, under the transport's name. */
    void environment(String transport, Map<String, Long> settings) {
        settings.forEach((k, v) -> socketBuffers.put(transport + "." + k, v));
    }

    /** The run as it stands: completed steps, each with the late arrivals counted since it closed. */
    RunResult snapshot(RunStatus status, String error) {
        List<StepResult> steps = new ArrayList<>();
        for (CompletedStep c : completed) {
            steps.add(c.withLateSoFar());
        }
        Environment env = EnvironmentProbe.describe(socketBuffers);
        return new RunResult(RunResult.SCHEMA_VERSION, "lossprobe", startedAt, Instant.now().toString(), status,
            error, env, plan, declaredCounters(), steps, searches);
    }

    private Map<String, List<CounterDescriptor>> declaredCounters() {
        Map<String, List<CounterDescriptor>> declared = new LinkedHashMap<>();
        for (String name : plan.transports()) {
            Transport t = transports.get(name);
            if (t != null && !t.counters().isEmpty()) {
                declared.put(name, t.counters());
            }
        }
        return declared;
    }
}
