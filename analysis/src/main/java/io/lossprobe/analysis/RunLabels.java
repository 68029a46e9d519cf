package io.lossprobe.analysis;

import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.util.Map;

/**
 * What a run was pointed at, as labels for metrics and titles for reports.
 *
 * <p>The result file does not name the peer outright. A run between two hosts shows itself by its clock offset (its
 * steps carry {@code clockOffset}); in the forward direction the receiving host's counters come back
 * ({@code receiverHostCounters}) and the plan's {@code bindAddress} is the {@code --target} host as typed. In a
 * {@code --reverse} run the receivers are here, the bind address is this host's, and the server's name is not in
 * the file: the target is {@value #UNKNOWN_TARGET} unless the caller knows it. A multicast run's target is its
 * group and its receivers ({@link #multicastTarget}).
 *
 * @param target    the peer host, or {@value #LOCAL} for a run on one host
 * @param direction {@value #FORWARD} (this host sends, or a run on one host) or {@value #REVERSE} (the peer sends)
 * @param mode      {@code stream} or {@code echo}
 * @param sizeBytes message size in bytes, header included (0 when the file has no plan)
 */
public record RunLabels(String target, String direction, String mode, int sizeBytes) {
    public static final String LOCAL = "local";
    public static final String UNKNOWN_TARGET = "remote";
    public static final String FORWARD = "forward";
    public static final String REVERSE = "reverse";

    public static RunLabels of(RunResult run) {
        Plan plan = run.plan();
        String mode = plan == null || plan.mode() == null ? Plan.STREAM : plan.mode();
        int size = plan == null ? 0 : plan.messageSize();
        boolean twoHosts = false;
        boolean receiverRemote = false;
        for (StepResult s : run.steps()) {
            twoHosts |= s.clockOffset() != null;
            receiverRemote |= s.receiverHostCounters() != null;
        }
        String multicast = multicastTarget(run);
        if (multicast != null) {
            return new RunLabels(multicast, FORWARD, mode, size);
        }
        if (!twoHosts && !receiverRemote) {
            return new RunLabels(LOCAL, FORWARD, mode, size);
        }
        if (receiverRemote && plan != null && plan.bindAddress() != null) {
            return new RunLabels(plan.bindAddress(), FORWARD, mode, size);
        }
        return new RunLabels(UNKNOWN_TARGET, REVERSE, mode, size);
    }

    /**
     * A multicast run's target (docs/multicast.md): its group and its receivers, {@code 239.255.0.1->198.18.0.101,
     * 198.18.0.102} (no spaces), as its first multicast step lists them; {@code mdc:SENDER->A,B} for Aeron
     * multi-destination-cast from SENDER; null for any other run.
     */
    public static String multicastTarget(RunResult run) {
        Map<String, String> options = run.plan() == null ? Map.of() : run.plan().transportOptions();
        String group = options.containsKey("udp.group") ? options.get("udp.group")
            : options.containsKey("aeron.group") ? options.get("aeron.group")
            : options.containsKey("aeron.mdc") ? "mdc:" + options.get("aeron.mdc") : null;
        if (group == null) {
            return null;
        }
        for (StepResult s : run.steps()) {
            if (s.receivers() != null) {
                return group + "->" + String.join(",", s.receivers().stream()
                    .map(io.lossprobe.core.result.ReceiverResult::receiver).toList());
            }
        }
        return group;
    }

    /** "multi-destination-cast" for an Aeron MDC run, else "multicast" (for a run {@link #multicastTarget} names). */
    public static String multicastKind(RunResult run) {
        return run.plan() != null && run.plan().transportOptions().containsKey("aeron.mdc") ? "multi-destination-cast"
            : "multicast";
    }

    /** The same labels with the target as the caller knows it (e.g. {@code --target} of the run just made). */
    public RunLabels withTarget(String knownTarget) {
        return knownTarget == null || knownTarget.isBlank() ? this
            : new RunLabels(knownTarget, direction, mode, sizeBytes);
    }
}
