package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * One flow's result for one step.
 *
 * @param socketDrops    datagrams the kernel dropped at this flow's receiving socket during the step
 *                       (the {@code drops} column of /proc/net/udp), or null where the transport has none
 * @param delay          one-way delay: receive time minus intended send time (between hosts corrected by the
 *                       estimated clock offset, see the step's {@code clockOffset})
 * @param transit        arrival minus the actual send time (the sender's lag left out)
 * @param delayBaselineNs between hosts: this flow's baseline for the step's {@code delayOverBaseline}
 * @param jitterNs       RFC 3550 interarrival jitter at the end of the step
 * @param ipdv           RFC 3393 IP delay variation between consecutive arrivals (absolute values)
 * @param transport      transport-specific counters for this flow (TCP_INFO, Aeron stream counters, ...)
 * @param echo           request/response figures in echo mode, else null
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record FlowResult(int flow, int port, Counts counts, LossBurst lossBurst, Long socketDrops, Latency delay,
                         Latency transit, Long delayBaselineNs, double jitterNs, Latency ipdv,
                         Map<String, Long> transport, Echo echo) {
    public FlowResult {
        transport = Maps.sorted(transport);
    }

    /** Each flow with its late counts ({@link #withLate(long, long)}), in flow order. */
    static java.util.List<FlowResult> withLate(java.util.List<FlowResult> flows, long[] latePerFlow,
                                               long[] lateDuplicatesPerFlow) {
        java.util.List<FlowResult> updated = new java.util.ArrayList<>(flows.size());
        for (int i = 0; i < flows.size(); i++) {
            updated.add(flows.get(i).withLate(latePerFlow[i], lateDuplicatesPerFlow[i]));
        }
        return updated;
    }

    static long sum(long[] perFlow) {
        long total = 0;
        for (long v : perFlow) {
            total += v;
        }
        return total;
    }

    public FlowResult withLate(long late, long lateDuplicates) {
        return new FlowResult(flow, port, counts.withLate(late, lateDuplicates), lossBurst, socketDrops, delay,
            transit, delayBaselineNs, jitterNs, ipdv,
            transport, echo);
    }
}
