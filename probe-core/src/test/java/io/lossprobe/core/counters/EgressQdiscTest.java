package io.lossprobe.core.counters;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;

/** Outputs as iproute2 6.1 prints them (recorded in the namespace lab and on multi-queue hosts). */
class EgressQdiscTest {
    @Test
    void routeGivesTheDevice() {
        assertThat(EgressQdisc.parseRouteDevice("198.18.0.1 dev eth0 src 198.18.0.11 uid 0 \\    cache \n"))
            .isEqualTo("eth0");
        assertThat(EgressQdisc.parseRouteDevice("local 127.0.0.1 dev lo table local src 127.0.0.1 uid 0 \\    cache"))
            .isEqualTo("lo");
        assertThat(EgressQdisc.parseRouteDevice("RTNETLINK answers: Network is unreachable")).isNull();
    }

    @Test
    void rootQdiscDropsAndKind() {
        String tbf = """
            qdisc tbf 8002: root refcnt 3 rate 20Mbit burst 64Kb lat 50ms\s
             Sent 6941600 bytes 65511 pkt (dropped 19023, overlimits 199138 requeues 0)\s
             backlog 0b 0p requeues 0
            """;
        assertThat(EgressQdisc.parseRootDrops(tbf)).isEqualTo(19023);
        assertThat(EgressQdisc.parseRootKind(tbf)).isEqualTo("tbf");
        String noqueue = """
            qdisc noqueue 0: root refcnt 2\s
             Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)\s
             backlog 0b 0p requeues 0
            """;
        assertThat(EgressQdisc.parseRootDrops(noqueue)).isZero();
        assertThat(EgressQdisc.parseRootKind(noqueue)).isEqualTo("noqueue");
    }

    @Test
    void onlyTheRootsCountNotAChildsNorAnIngressQdiscs() {
        // mq sums its children's statistics into its own when dumped: its line is the host's figure.
        String mq = """
            qdisc ingress ffff: parent ffff:fff1 ----------------\s
             Sent 500 bytes 5 pkt (dropped 9, overlimits 0 requeues 0)\s
            qdisc mq 0: root\s
             Sent 123456 bytes 1000 pkt (dropped 42, overlimits 0 requeues 3)\s
             backlog 0b 0p requeues 3
            qdisc fq_codel 0: parent :1 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64\s
             Sent 61728 bytes 500 pkt (dropped 21, overlimits 0 requeues 1)\s
            """;
        assertThat(EgressQdisc.parseRootDrops(mq)).isEqualTo(42);
        assertThat(EgressQdisc.parseRootKind(mq)).isEqualTo("mq");
        assertThat(EgressQdisc.parseRootDrops("qdisc htb 1: root refcnt 2 r2q 10 default 0\n")).isEqualTo(-1);
        assertThat(EgressQdisc.parseRootDrops("")).isEqualTo(-1);
    }

    @Test
    void loopbackIsFoundAndHasNoQueueToDropFrom() throws Exception {
        assumeTrue(new ProcessBuilder("sh", "-c", "command -v ip && command -v tc").start().waitFor() == 0,
            "needs iproute2");
        EgressQdisc lo = EgressQdisc.forTarget("127.0.0.1");
        assertThat(lo.device()).isEqualTo("lo");
        assertThat(lo.counterKey()).isEqualTo("qdisc.lo.drops");
        assertThat(lo.drops()).isZero();
        assertThat(EgressQdisc.NONE.drops()).isEqualTo(-1);
    }
}
