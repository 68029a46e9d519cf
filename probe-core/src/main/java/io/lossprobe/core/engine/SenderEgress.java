package io.lossprobe.core.engine;

import io.lossprobe.core.transport.SenderEndpoint;
import java.util.Locale;
import java.util.Map;

/**
 * What the sending host's own counters say, for one step, about packets it dropped at its egress (the queue of
 * the interface that routes to the target, or that interface itself) without any send failing for them. Those
 * messages count as lost although they never left the sending host.
 *
 * <p>Linux reports such a drop to the sending socket as ENOBUFS only with IP_RECVERR, and only where the queue
 * refuses the packet as it is offered (tbf, pfifo, a full txqueuelen, fq's limits); then the transport counts the
 * messages in sendFailed. Drops it never reports: fq_codel's overflow (NET_XMIT_CN) and CoDel's dequeue drops,
 * the rest of a GSO packet that tbf segmented and partly dropped. Udp SndbufErrors counts every ENOBUFS a UDP send
 * got, reported or not (udp_send_skb, udp_sendmsg); the root qdisc's drops and the interface's transmit drops
 * count every drop.
 *
 * @param device               the interface the target is routed through; null when the sender is not on this
 *                             host
 * @param qdiscDrops           packets its root qdisc dropped in the step; -1 when not read
 * @param deviceTxDrops        packets the interface itself dropped on transmit (/proc/net/dev)
 * @param sndbufErrors         the host's Udp SndbufErrors in the step
 * @param dropsReported        the senders were told of egress drops (ENOBUFS), which are then in sendFailed
 * @param reportable           the senders could be told (the transport has the setting), whether they were or not
 * @param messagesPerPacketMax the most messages one queued packet carries; 0 when unknown
 */
record SenderEgress(String device, long qdiscDrops, long deviceTxDrops, long sndbufErrors, boolean dropsReported,
                    boolean reportable, long messagesPerPacketMax) {
    /** The sender is not on this host (a --reverse run): its counters are not read. */
    static final SenderEgress UNKNOWN = new SenderEgress(null, -1, 0, 0, false, false, 0);

    /**
     * @param qdiscDrops       the root qdisc's drops in the step, -1 when not read
     * @param senderHostDeltas the sending host's counter deltas for the step
     * @param senderEnv        the sending endpoint's environment ({@link SenderEndpoint#EGRESS_DROPS_REPORTED}, ...)
     */
    static SenderEgress of(String device, long qdiscDrops, Map<String, Long> senderHostDeltas,
                           Map<String, Long> senderEnv) {
        if (device == null) {
            return UNKNOWN;
        }
        return new SenderEgress(device, qdiscDrops, senderHostDeltas.getOrDefault("dev." + device + ".txDrops", 0L),
            senderHostDeltas.getOrDefault("Udp.SndbufErrors", 0L),
            senderEnv.getOrDefault(SenderEndpoint.EGRESS_DROPS_REPORTED, 0L) == 1,
            senderEnv.containsKey(SenderEndpoint.EGRESS_DROPS_REPORTED),
            senderEnv.getOrDefault(SenderEndpoint.MESSAGES_PER_PACKET_MAX, 0L));
    }

    /**
     * Packets dropped at the egress that no send failed for: every drop the qdisc and the interface counted (the
     * ENOBUFS count when the qdisc was not read), less the ENOBUFS the senders were told of. SndbufErrors also
     * counts sends refused while the socket's send buffer was full (EAGAIN, retried later, not a drop), which is
     * why it is only the fallback.
     */
    long silentDrops() {
        if (device == null) {
            return 0;
        }
        long dropped = qdiscDrops >= 0 ? qdiscDrops + deviceTxDrops : Math.max(sndbufErrors, deviceTxDrops);
        return Math.max(0, dropped - (dropsReported ? sndbufErrors : 0));
    }

    /**
     * Says in words where {@code attributed} lost messages were put down to this egress and why that is an
     * estimate; null when none were.
     */
    String warning(long attributed) {
        if (attributed <= 0) {
            return null;
        }
        StringBuilder w = new StringBuilder(String.format(Locale.ROOT, "%d lost message(s) put down to the sending "
            + "host's own egress on %s (root qdisc dropped %s, the interface %d, %d UDP send(s) got ENOBUFS%s): an "
            + "estimate from host-wide counters, which count other traffic through %s too", attributed, device,
            qdiscDrops < 0 ? "an unknown number" : Long.toString(qdiscDrops), deviceTxDrops, sndbufErrors,
            dropsReported ? " and failed" : " yet reported success", device));
        if (messagesPerPacketMax != 1) {
            w.append(messagesPerPacketMax > 1
                ? String.format(Locale.ROOT, "; they count packets, and one packet carries up to %d messages "
                    + "(UDP GSO), so more of the loss may be the sending host's", messagesPerPacketMax)
                : "; they count packets, and one packet may carry several messages, so more of the loss may be "
                    + "the sending host's");
        }
        if (reportable && !dropsReported) {
            w.append("; a sender told of its drops (udp.recverr=on) counts them exactly, in sendFailed");
        }
        return w.toString();
    }
}
