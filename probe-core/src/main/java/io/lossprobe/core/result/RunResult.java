package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.lossprobe.core.plan.Plan;
import java.util.List;

/**
 * A whole run as written to the results file. {@link #SCHEMA_VERSION} changes when a field changes meaning
 * or is removed; readers refuse newer major versions.
 *
 * @param status {@code complete}, {@code interrupted} (Ctrl-C: the steps done so far) or {@code failed}
 * @param search the rate searches' findings ({@code run --search}), one per criterion, transport and size; absent
 *               without a search
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunResult(int schemaVersion, String tool, String startedAt, String finishedAt, String status,
                        String error, Environment environment, Plan plan, List<StepResult> steps,
                        @com.fasterxml.jackson.databind.annotation.JsonDeserialize(
                            using = LenientList.Searches.class) List<SearchResult> search) {
    /**
     * 2: dense wire sequences; {@code counts.late} holds first arrivals only ({@code lateDuplicates} apart);
     * {@code counts.lostInRuns}; delay between hosts corrected by the estimated clock offset.
     */
    public static final int SCHEMA_VERSION = 2;

    public RunResult {
        steps = List.copyOf(steps);
        search = search == null || search.isEmpty() ? null : List.copyOf(search);
    }

    /** A run without a search. */
    public RunResult(int schemaVersion, String tool, String startedAt, String finishedAt, String status,
                     String error, Environment environment, Plan plan, List<StepResult> steps) {
        this(schemaVersion, tool, startedAt, finishedAt, status, error, environment, plan, steps, null);
    }

    /** The same run with another status and error (a write failure marks it failed). */
    public RunResult withStatus(String newStatus, String newError) {
        return new RunResult(schemaVersion, tool, startedAt, finishedAt, newStatus, newError, environment, plan,
            steps, search);
    }
}
