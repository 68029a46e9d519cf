package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * One receiver's share of a multicast step (docs/multicast.md): every receiver is sent every flow's messages, and
 * accounts them exactly as a unicast receiver does, so each has its own counts per flow and the identities of the
 * measurement contract hold for each.
 *
 * @param receiver             the receiver as the run names it (its serve's address)
 * @param delay                its one-way delays over all flows
 * @param socketDrops          what its sockets dropped (/proc/net/udp), or null where unknown
 * @param receiverHostCounters its host's counter deltas, when it is another host
 * @param attribution          where its losses went, as far as the counters tell
 * @param warnings             the warnings its figures gave, in words
 * @param gone                 why and when the receiver was lost to the run (its serve died, its control connection
 *                             dropped or fell silent): from then on its counts are of nothing received, every message
 *                             sent counted lost; null while it takes part
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ReceiverResult(String receiver, Counts counts, double lossPercent, LossBurst lossBurst, Latency delay,
                             Long socketDrops, Map<String, Long> receiverHostCounters,
                             Map<String, Long> attribution, List<String> warnings, List<FlowResult> flows,
                             String gone) {
    public ReceiverResult {
        receiverHostCounters = receiverHostCounters == null ? null : Maps.sorted(receiverHostCounters);
        attribution = Maps.ordered(attribution);
        warnings = warnings == null ? List.of() : List.copyOf(warnings);
        flows = List.copyOf(flows);
    }

    /** The receiver's part of {@code step}, a step built from its receipt alone. */
    public static ReceiverResult of(String receiver, StepResult step) {
        return new ReceiverResult(receiver, step.counts(), step.lossPercent(), step.lossBurst(), step.delay(),
            step.socketDrops(), step.receiverHostCounters(), step.attribution(), step.warnings(), step.flows(), null);
    }

    /** The same, lost to the run for {@code why} ({@link #gone}). */
    public ReceiverResult withGone(String why) {
        return new ReceiverResult(receiver, counts, lossPercent, lossBurst, delay, socketDrops, receiverHostCounters,
            attribution, warnings, flows, why);
    }

    /** The same with its late counts (one per flow), those after the step closed included, as {@link StepResult}. */
    public ReceiverResult withLate(long[] latePerFlow, long[] lateDuplicatesPerFlow) {
        return new ReceiverResult(receiver, counts.withLate(FlowResult.sum(latePerFlow),
            FlowResult.sum(lateDuplicatesPerFlow)), lossPercent, lossBurst, delay, socketDrops, receiverHostCounters,
            attribution, warnings, FlowResult.withLate(flows, latePerFlow, lateDuplicatesPerFlow), gone);
    }
}
