package io.lossprobe.analysis;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.lossprobe.core.result.RunResult;
import java.util.List;
import java.util.Optional;

/**
 * The results of a mesh ({@code lossprobe mesh}): every planned pair of hosts, each with its own run's result or
 * why it has none. One format for one source's share (what {@code mesh} writes on each host) and for the merge of
 * all of them ({@code mesh merge}). {@link #SCHEMA_VERSION} changes when a field changes meaning or is removed;
 * readers refuse newer versions. Each pair's {@code result} is an ordinary run result with its own
 * {@code schemaVersion}. See docs/mesh.md.
 *
 * @param kind           always {@link #KIND}: tells a mesh file from a run's result file
 * @param selection      how the pairs were chosen: {@code full}, {@code ring}, {@code targets}, {@code sample:K}
 * @param hosts          every host of the mesh, in the order given
 * @param sources        the sources whose pairs this file holds results for (all that reported, after a merge)
 * @param pairs          the pairs of those sources in schedule order, plus (after a merge) the pairs of sources
 *                       that reported nothing, as {@code missing}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record MeshResult(String kind, int meshSchemaVersion, String tool, String startedAt, String finishedAt,
                         String selection, List<Host> hosts, List<String> sources, Schedule schedule,
                         List<Pair> pairs) {
    public static final String KIND = "lossprobe-mesh";
    /** 1: the first version. */
    public static final int SCHEMA_VERSION = 1;

    /** The pair ran and its result is complete. */
    public static final String COMPLETE = "complete";
    /** The pair ran but stopped early (Ctrl-C, or the result says so): its steps so far are kept. */
    public static final String INTERRUPTED = "interrupted";
    /** The pair could not run or failed while running (target down, refused, unknown host): {@code error} says. */
    public static final String FAILED = "failed";
    /** The pair was not started: its slot had passed, or the mesh was stopped first. */
    public static final String SKIPPED = "skipped";
    /** No file of its source was merged: the source's own mesh did not run or did not report. */
    public static final String MISSING = "missing";

    public MeshResult {
        hosts = List.copyOf(hosts);
        sources = List.copyOf(sources);
        pairs = List.copyOf(pairs);
    }

    /** A host: {@code name} labels it in the matrix and in metrics, {@code address:port} is its serve. */
    public record Host(String name, String address, int port) {
    }

    /**
     * When each pair runs.
     *
     * @param rounds      how many rounds; in a round no host takes part in more than one pair
     * @param maxParallel at most this many pairs in a round
     * @param slotMs      each round's length when the rounds start on the clock (several hosts each run their
     *                    own pairs), 0 when rounds ran back to back in one process
     * @param startAt     when round 0 began (ISO-8601), for slotted meshes
     * @param planned     every pair of the mesh and its round
     */
    public record Schedule(int rounds, int maxParallel, long slotMs, String startAt, List<Planned> planned) {
        public Schedule {
            planned = List.copyOf(planned);
        }
    }

    /** One planned pair: {@code source} sends to {@code target} in {@code round}. */
    public record Planned(String source, String target, int round) {
    }

    /**
     * One pair's outcome.
     *
     * @param status     {@link #COMPLETE}, {@link #INTERRUPTED}, {@link #FAILED}, {@link #SKIPPED} or {@link #MISSING}
     * @param error      why it failed, was skipped or is missing; null when complete
     * @param startedAt  when it started (ISO-8601), null if it never did
     * @param durationMs how long it took, connect to goodbye
     * @param lateMs      how long after its slot began it started (slotted meshes)
     * @param clockStepMs how far its source's wall clock had stepped, since round 0 began, from the monotonic
     *                    clock the rounds keep to (ahead when positive); null when it had not
     * @param note        why it started late, and any step of the clock, in words; null when neither
     * @param result      the run's result (its steps so far when it failed midway), or null
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Pair(String source, String target, int round, String status, String error, String startedAt,
                       Long durationMs, Long lateMs, Long clockStepMs, String note, RunResult result) {
        /** True when the pair produced measurements (complete or interrupted with steps). */
        @JsonIgnore
        public boolean measured() {
            return result != null && !result.steps().isEmpty();
        }
    }

    /** The pair from {@code source} to {@code target}, if this file has it. */
    public Optional<Pair> pair(String source, String target) {
        return pairs.stream().filter(p -> p.source().equals(source) && p.target().equals(target)).findFirst();
    }
}
