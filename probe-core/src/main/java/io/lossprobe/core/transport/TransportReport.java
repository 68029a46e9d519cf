package io.lossprobe.core.transport;

import io.lossprobe.core.result.Maps;
import java.util.Map;

/**
 * A transport's own counters for one step, already as deltas over the step (or as values at its end, for
 * gauges such as rtt or cwnd; the key says which).
 *
 * @param counters transport-wide counters
 * @param flows    per-flow counters by flow index; the key {@value #SOCKET_DROPS} is lifted into the flow's
 *                 {@code socketDrops} field, {@value #FOREIGN} into its {@code foreign} count
 * @param notes    events a reader must not miss, in words (e.g. "flow 3 (port 40003): connection reset by
 *                 peer"); they become the step's warnings
 */
public record TransportReport(Map<String, Long> counters, Map<Integer, Map<String, Long>> flows,
                              java.util.List<String> notes) {
    public static final String SOCKET_DROPS = "socketDrops";
    /**
     * Per-flow key beside {@value #SOCKET_DROPS}: present (and above 1) when the drops count packets of up to this
     * many messages each, not messages (UDP_GRO); the loss they explain is then an estimate.
     */
    public static final String SOCKET_DROPS_MESSAGES_MAX = "socketDropsMessagesMax";
    /**
     * Per-flow key: arrivals the transport refused before accounting because they cannot be the flow's sender's
     * (another source address, a connection beyond the flow's one); lifted into the flow's {@code foreign} count.
     */
    public static final String FOREIGN = "foreign";
    public static final TransportReport EMPTY = new TransportReport(Map.of(), Map.of());

    public TransportReport {
        counters = Maps.sorted(counters);
        flows = Map.copyOf(flows);
        notes = notes == null ? java.util.List.of() : java.util.List.copyOf(notes);
    }

    public TransportReport(Map<String, Long> counters, Map<Integer, Map<String, Long>> flows) {
        this(counters, flows, java.util.List.of());
    }

    public Map<String, Long> flow(int flow) {
        return flows.getOrDefault(flow, Map.of());
    }
}
