package io.lossprobe.core.transport;

import io.lossprobe.core.result.Maps;
import java.util.Map;

/**
 * A transport's own counters for one step, already as deltas over the step (or as values at its end, for
 * gauges such as rtt or cwnd; the key says which).
 *
 * @param counters transport-wide counters
 * @param flows    per-flow counters by flow index; the key {@value #SOCKET_DROPS} is lifted into the flow's
 *                 {@code socketDrops} field
 */
public record TransportReport(Map<String, Long> counters, Map<Integer, Map<String, Long>> flows) {
    public static final String SOCKET_DROPS = "socketDrops";
    public static final TransportReport EMPTY = new TransportReport(Map.of(), Map.of());

    public TransportReport {
        counters = Maps.sorted(counters);
        flows = Map.copyOf(flows);
    }

    public Map<String, Long> flow(int flow) {
        return flows.getOrDefault(flow, Map.of());
    }
}
