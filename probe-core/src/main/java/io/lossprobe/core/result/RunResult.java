package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.CounterDescriptor;
import java.util.List;
import java.util.Map;

/**
 * A whole run as written to the results file. {@link #SCHEMA_VERSION} changes when a field changes meaning
 * or is removed; readers refuse newer major versions.
 *
 * @param status   {@code complete}, {@code interrupted} (Ctrl-C: the steps done so far) or {@code failed}
 *                 ({@link RunStatus}; {@code running} while it is written); null when the file has none or one
 *                 this version does not know
 * @param counters by transport: what each key of its {@code transportCounters} means (absent in files written
 *                 before transports declared their counters)
 * @param search   the rate searches' findings ({@code run --search}), one per criterion, transport and size;
 *                 absent without a search
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunResult(int schemaVersion, String tool, String startedAt, String finishedAt, RunStatus status,
                        String error, Environment environment, Plan plan,
                        Map<String, List<CounterDescriptor>> counters, List<StepResult> steps,
                        @com.fasterxml.jackson.databind.annotation.JsonDeserialize(
                            using = LenientList.Searches.class) List<SearchResult> search) {
    /**
     * 2: dense wire sequences; {@code counts.late} holds first arrivals only ({@code lateDuplicates} apart);
     * {@code counts.lostInRuns}; delay between hosts corrected by the estimated clock offset.
     */
    public static final int SCHEMA_VERSION = 2;

    public RunResult {
        steps = List.copyOf(steps);
        counters = counters == null ? null : Maps.ordered(counters);
        search = search == null || search.isEmpty() ? null : List.copyOf(search);
    }

    /** A run without a search. */
    public RunResult(int schemaVersion, String tool, String startedAt, String finishedAt, RunStatus status,
                     String error, Environment environment, Plan plan,
                     Map<String, List<CounterDescriptor>> counters, List<StepResult> steps) {
        this(schemaVersion, tool, startedAt, finishedAt, status, error, environment, plan, counters, steps, null);
    }

    /** The same run with another status and error (a write failure marks it failed). */
    public RunResult withStatus(RunStatus newStatus, String newError) {
        return new RunResult(schemaVersion, tool, startedAt, finishedAt, newStatus, newError, environment, plan,
            counters, steps, search);
    }

    /** What {@code transport} declared its counters to be; empty when the file does not say. */
    public List<CounterDescriptor> counters(String transport) {
        return counters == null ? List.of() : counters.getOrDefault(transport, List.of());
    }
}
