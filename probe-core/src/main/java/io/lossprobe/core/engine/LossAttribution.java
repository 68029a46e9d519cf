package io.lossprobe.core.engine;

import io.lossprobe.core.result.Counts;
import java.util.LinkedHashMap;
import java.util.Map;

/** Where a step's lost messages went, as far as the counters can tell (a step's {@code attribution}). */
final class LossAttribution {
    private LossAttribution() {
    }

    /**
     * Splits the lost messages by where the counters say they went: the receiving sockets' own drop counts
     * first, then the receiving host's NIC drops, then its per-CPU receive backlog's drops, then the packets the
     * sending host dropped at its own egress
     * without any send failing ({@link SenderEgress#silentDrops}), and what remains is the path (or unknown).
     * Egress drops the senders were told of are not here: those messages are in sendFailed ({@code sendRefused}).
     *
     * @param socketDrops        the most lost messages the sockets' drops can explain; null when not counted
     * @param socketEstimated    the drops were counted in packets ({@link PacketDrops}): the socket's share is an
     *                           estimate, and {@code receiverSocketEstimated} (1) says so
     * @param hostDeltas         the receiving host's counter deltas
     * @param senderEgressSilent packets the sending host's egress dropped that no send failed for
     */
    static Map<String, Long> attribute(Counts totals, Long socketDrops, boolean socketEstimated,
                                       Map<String, Long> hostDeltas, long senderEgressSilent) {
        Map<String, Long> out = new LinkedHashMap<>();
        long remaining = totals.lost();
        out.put("lost", remaining);
        long socket = Math.min(remaining, socketDrops == null ? 0 : socketDrops);
        out.put("receiverSocket", socket);
        remaining -= socket;
        long nic = 0;
        for (Map.Entry<String, Long> e : hostDeltas.entrySet()) {
            if (e.getKey().startsWith("dev.") && e.getKey().endsWith(".rxDrops")) {
                nic += e.getValue();
            }
        }
        long nicShare = Math.min(remaining, nic);
        out.put("nic", nicShare);
        remaining -= nicShare;
        // The per-CPU receive backlog (netdev_max_backlog) drops host-wide, before any socket: loopback, veth and
        // RPS traffic queue there. Host-wide, so other traffic's drops count too: at most what is left.
        long backlogShare = Math.min(remaining, hostDeltas.getOrDefault("Softnet.dropped", 0L));
        out.put("receiverBacklog", backlogShare);
        remaining -= backlogShare;
        long egressShare = Math.min(remaining, senderEgressSilent);
        out.put("senderEgress", egressShare);
        remaining -= egressShare;
        out.put("pathOrUnknown", remaining);
        out.put("sendRefused", totals.sendFailed());
        if (socketEstimated) {
            out.put("receiverSocketEstimated", 1L);
        }
        return out;
    }
}
