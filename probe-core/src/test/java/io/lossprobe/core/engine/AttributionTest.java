package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.transport.SenderEndpoint;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How lost messages are split by the counters, and what the sending host's egress counters explain. */
class AttributionTest {
    private static final Map<String, Long> NO_GSO_TOLD = Map.of(SenderEndpoint.EGRESS_DROPS_REPORTED, 1L,
        SenderEndpoint.MESSAGES_PER_PACKET_MAX, 1L);
    private static final Map<String, Long> NO_GSO_SILENT = Map.of(SenderEndpoint.EGRESS_DROPS_REPORTED, 0L,
        SenderEndpoint.MESSAGES_PER_PACKET_MAX, 1L);

    private static Counts counts(long sent, long sendFailed, long received) {
        return new Counts(sent + sendFailed, sent, sendFailed, 0, received, sent - received, sent - received, 0, 0,
            0, 0, 0, 0, sent == received ? 0 : 1);
    }

    @Test
    void receiverSocketThenNicThenBacklogThenSenderEgressThenThePath() {
        Map<String, Long> a = LossAttribution.attribute(counts(1000, 5, 900), 30L, false,
            Map.of("dev.eth0.rxDrops", 20L, "Softnet.dropped", 15L), 25);
        assertThat(a).containsExactly(Map.entry("lost", 100L), Map.entry("receiverSocket", 30L),
            Map.entry("nic", 20L), Map.entry("receiverBacklog", 15L), Map.entry("senderEgress", 25L),
            Map.entry("pathOrUnknown", 10L), Map.entry("sendRefused", 5L));
        // Counters that explain more than was lost never make a share negative.
        assertThat(LossAttribution.attribute(counts(1000, 0, 990), null, false, Map.of(), 500))
            .containsEntry("senderEgress", 10L).containsEntry("pathOrUnknown", 0L);
    }

    @Test
    void silentDropsWithoutRecvErrAreEveryEgressDrop() {
        // The lab's tbf with udp.recverr=off: 19,023 drops, 19,023 ENOBUFS the sockets never saw.
        SenderEgress e = SenderEgress.of("eth0", 19_023, Map.of("Udp.SndbufErrors", 19_023L), NO_GSO_SILENT);
        assertThat(e.silentDrops()).isEqualTo(19_023);
        assertThat(e.warning(19_023)).contains("estimate").contains("udp.recverr=on").doesNotContain("GSO");
        // Without the qdisc's counter, the ENOBUFS count is the floor.
        assertThat(SenderEgress.of("eth0", -1, Map.of("Udp.SndbufErrors", 7L), NO_GSO_SILENT).silentDrops())
            .isEqualTo(7);
    }

    @Test
    void withRecvErrOnlyTheDropsNoSendWasToldOfRemain() {
        // Reported drops are in sendFailed already; the qdisc's extra drops (another flow's, a segmented GSO
        // packet's tail) are what is left.
        SenderEgress e = SenderEgress.of("eth0", 22_216, Map.of("Udp.SndbufErrors", 22_215L), NO_GSO_TOLD);
        assertThat(e.silentDrops()).isEqualTo(1);
        assertThat(e.warning(1)).doesNotContain("udp.recverr");
        assertThat(SenderEgress.of("eth0", -1, Map.of("Udp.SndbufErrors", 9L), NO_GSO_TOLD).silentDrops()).isZero();
        // The interface's own transmit drops count too.
        assertThat(SenderEgress.of("eth0", 0, Map.of("dev.eth0.txDrops", 3L), NO_GSO_TOLD).silentDrops()).isEqualTo(3);
    }

    @Test
    void packetsCarryingSeveralMessagesMakeItALowerBound() {
        SenderEgress gso = SenderEgress.of("eth0", 10_869, Map.of("Udp.SndbufErrors", 10_869L),
            Map.of(SenderEndpoint.EGRESS_DROPS_REPORTED, 0L, SenderEndpoint.MESSAGES_PER_PACKET_MAX, 64L));
        assertThat(gso.warning(10_869)).contains("up to 64 messages (UDP GSO)");
        // A transport that cannot say (no environment keys): possibly several, and no udp.recverr advice.
        SenderEgress other = SenderEgress.of("eth0", 12, Map.of(), Map.of());
        assertThat(other.silentDrops()).isEqualTo(12);
        assertThat(other.warning(12)).contains("several messages").doesNotContain("udp.recverr");
    }

    @Test
    void aRemoteSenderExplainsNothingAndNothingNeedsSaying() {
        assertThat(SenderEgress.of(null, 100, Map.of("Udp.SndbufErrors", 100L), NO_GSO_SILENT).silentDrops()).isZero();
        assertThat(SenderEgress.UNKNOWN.warning(0)).isNull();
    }

    private static Counts lossInRuns(long sent, long lost, long runs) {
        return new Counts(sent, sent, 0, 0, sent - lost, lost, lost, 0, 0, 0, 0, 0, 0, runs);
    }

    /** UDP_GRO: a drop is a packet of up to 64 messages, so the socket's share is an estimate, bounded and labelled. */
    @Test
    void dropsCountedInPacketsAreAnEstimateCheckedByTheirBounds() {
        // Measured on loopback at max with udp.gro=on: 122,339 packets dropped, 7,829,696 messages lost in 246 runs.
        Counts measured = lossInRuns(10_000_000, 7_829_696, 246);
        PacketDrops gro = new PacketDrops();
        gro.add(122_339, 64L, measured);
        assertThat(gro.estimated()).isTrue();
        assertThat(gro.messagesAtMost()).isEqualTo(122_339L * 64);
        Map<String, Long> a = LossAttribution.attribute(measured, gro.messagesAtMost(), gro.estimated(), Map.of(), 0);
        assertThat(a).containsEntry("receiverSocket", 7_829_696L).containsEntry("pathOrUnknown", 0L)
            .containsEntry("receiverSocketEstimated", 1L);
        assertThat(gro.warning(7_829_696)).contains("122339 drops in packets").contains("up to 64 messages")
            .contains("an estimate").contains("consistent on every flow");

        // More lost than the packets can have carried: the rest is elsewhere, and the check says so.
        Counts more = lossInRuns(10_000, 7_000, 3);
        PacketDrops short1 = new PacketDrops();
        short1.add(100, 64L, more);
        Map<String, Long> b = LossAttribution.attribute(more, short1.messagesAtMost(), short1.estimated(), Map.of(), 0);
        assertThat(b).containsEntry("receiverSocket", 6_400L).containsEntry("pathOrUnknown", 600L);
        assertThat(short1.warning(6_400)).contains("not consistent on 1 of 1 flows");
        // Fewer packets than loss runs: a run no dropped packet explains.
        PacketDrops runs = new PacketDrops();
        runs.add(2, 64L, more);
        assertThat(runs.warning(128)).contains("not consistent");

        // Drops counted in messages (no GRO): exact, no label, no warning.
        PacketDrops exact = new PacketDrops();
        exact.add(7_000, null, more);
        assertThat(exact.estimated()).isFalse();
        assertThat(exact.warning(7_000)).isNull();
        assertThat(LossAttribution.attribute(more, exact.messagesAtMost(), false, Map.of(), 0))
            .containsEntry("receiverSocket", 7_000L).doesNotContainKey("receiverSocketEstimated");
    }
}
