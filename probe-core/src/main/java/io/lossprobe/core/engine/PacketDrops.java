package io.lossprobe.core.engine;

import io.lossprobe.core.result.Counts;

/**
 * Receiving-socket drops counted in packets rather than messages (UDP_GRO: the kernel queues a sender's GSO send as
 * one packet and counts its drop once), summed over a step's flows. A dropped packet is one run of consecutive
 * messages of one flow, so per flow {@code lossRuns <= packets <= lost <= packets x N} ({@code N} the most messages a
 * packet carries) must hold if the socket explains the loss; what the packets explain is then estimated as at most
 * {@code packets x N} messages, and labelled so (docs/performance.md, "GRO and drop attribution").
 */
final class PacketDrops {
    private long packets;
    private long packetMessagesMax;
    private long messageDrops;
    private long perPacketMost;
    private int flows;
    private int inconsistentFlows;

    /**
     * One flow's socket drops: messages when {@code perPacketMax} is null or 1, else packets of up to that many
     * messages; {@code c} is the flow's counts.
     */
    void add(long drops, Long perPacketMax, Counts c) {
        if (perPacketMax == null || perPacketMax <= 1) {
            messageDrops += drops;
            return;
        }
        flows++;
        perPacketMost = Math.max(perPacketMost, perPacketMax);
        packets += drops;
        packetMessagesMax += drops * perPacketMax;
        long lost = c.lost() - c.late(); // late arrivals were not dropped by the socket
        boolean consistent = c.lossEvents() <= drops && drops <= lost && lost <= drops * perPacketMax;
        if (!consistent) {
            inconsistentFlows++;
        }
    }

    /** True when some flow's socket dropped packets: the socket's share is then an estimate. */
    boolean estimated() {
        return packets > 0;
    }

    /** The most lost messages the sockets' drops can explain: message drops plus packets times their capacity. */
    long messagesAtMost() {
        return messageDrops + packetMessagesMax;
    }

    /** The step's warning when drops were counted in packets, else null. */
    String warning(long attributed) {
        if (!estimated()) {
            return null;
        }
        return String.format("the receiving sockets counted %d drops in packets, not messages (UDP_GRO: one packet is"
                + " a run of up to %d messages), so the %d lost messages attributed to them are an estimate; %s",
            packets, perPacketMost, attributed, inconsistentFlows == 0
                ? "consistent on every flow (loss runs <= packets <= lost <= packets x their capacity)"
                : "not consistent on " + inconsistentFlows + " of " + flows
                + " flows (loss runs <= packets <= lost <= packets x their capacity fails): part of the loss is"
                + " elsewhere");
    }
}
