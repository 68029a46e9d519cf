package io.lossprobe.core.counters;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ProcFilesTest {
    @Test
    void snmpPairsBecomeSectionDotNameKeys() {
        String snmp = """
            Ip: Forwarding DefaultTTL
            Ip: 2 64
            Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
            Udp: 1000 2 30 999 28 1 0 0 0
            Tcp: RtoAlgorithm RetransSegs
            Tcp: 1 77
            """;
        Map<String, Long> m = ProcFiles.parseSnmp(snmp, Set.of("Udp", "Tcp"));
        assertThat(m).containsEntry("Udp.RcvbufErrors", 28L).containsEntry("Udp.InErrors", 30L)
            .containsEntry("Tcp.RetransSegs", 77L).doesNotContainKey("Ip.Forwarding");
    }

    @Test
    void netDevHasPacketsBytesAndDrops() {
        String dev = """
            Inter-|   Receive                                                |  Transmit
             face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
                lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0
              eth0: 100 10 1 7 0 0 0 0 200 20 0 3 0 0 0 0
            """;
        Map<String, Long> m = ProcFiles.parseNetDev(dev);
        assertThat(m).containsEntry("dev.lo.rxPackets", 29L).containsEntry("dev.eth0.rxDrops", 7L)
            .containsEntry("dev.eth0.txDrops", 3L).containsEntry("dev.eth0.txBytes", 200L);
    }

    @Test
    void softnetIsSummedOverCpusFromHex() {
        // Two CPUs as Linux 6.x prints them (processed, dropped, time_squeeze, then more columns).
        String softnet = """
            06d3d2fd 00000002 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
            06c0523e 0000000a 00000004 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000000 00000000
            """;
        assertThat(ProcFiles.parseSoftnet(softnet)).containsEntry("Softnet.dropped", 12L)
            .containsEntry("Softnet.timeSqueeze", 5L).containsEntry("Softnet.processed", 0x06d3d2fdL + 0x06c0523eL);
        assertThat(ProcFiles.parseSoftnet("")).isEmpty();
    }

    @Test
    void udpDropsAreSummedByLocalPort() {
        String udp = """
               sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
              1: 0100007F:9C40 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1 2 0000000000000000 17
              2: 0100007F:9C41 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 2 2 0000000000000000 0
              3: 00000000:9C40 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 3 2 0000000000000000 3
            """;
        Map<Integer, Long> m = ProcFiles.parseUdpDrops(udp);
        assertThat(m).containsEntry(40000, 20L).containsEntry(40001, 0L);
    }

    @Test
    void cpuLineGivesBusyAndTotal() {
        long[] cpu = ProcFiles.parseCpuLine("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3\n");
        assertThat(cpu).containsExactly(150, 1000);
    }

    /**
     * A /proc/sys file reports size 0 and answers only a read at offset 0; Files.readString read "4" of
     * "4194304". cat reads it with one large read, as a person would see it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"/proc/sys/net/core/rmem_max", "/proc/sys/kernel/pid_max", "/proc/sys/kernel/ostype"})
    void aSysctlFileIsReadWholeAsCatPrintsIt(String path) throws Exception {
        assumeTrue(Files.isReadable(Path.of(path)), path + " is not readable here");
        String cat = cat(path);
        assertThat(cat.trim()).hasSizeGreaterThan(1);
        assertThat(ProcFiles.read(path)).isEqualTo(cat);
    }

    @Test
    void aSysctlNumberIsReadWhole() throws Exception {
        String path = "/proc/sys/kernel/pid_max";
        assumeTrue(Files.isReadable(Path.of(path)), path + " is not readable here");
        assertThat(ProcFiles.readLong(path)).isEqualTo(Long.parseLong(cat(path).trim()));
    }

    @Test
    void aFileLongerThanOneReadIsReadWhole(@TempDir Path dir) throws Exception {
        String text = "0123456789abcdef\n".repeat(20_000);
        Path file = Files.writeString(dir.resolve("long"), text);
        assertThat(ProcFiles.read(file.toString())).isEqualTo(text);
    }

    @Test
    void aMissingFileReadsAsEmpty() {
        assertThat(ProcFiles.read("/proc/sys/no/such/sysctl")).isEmpty();
        assertThat(ProcFiles.readLong("/proc/sys/no/such/sysctl")).isEqualTo(-1);
    }

    /** The file as the cat tool prints it. */
    static String cat(String path) throws Exception {
        Process p = new ProcessBuilder("cat", path).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).as("cat finished").isTrue();
        assertThat(p.exitValue()).as("cat " + path + ": " + out).isZero();
        return out;
    }

    @Test
    void theLiveFilesAreReadable() {
        HostCounters.Sample a = HostCounters.sample();
        assertThat(a.counters()).containsKey("Udp.InDatagrams").containsKey("dev.lo.rxPackets");
        assertThat(a.cpuTotalJiffies()).isPositive();
    }

    /**
     * The kernel's own counters name their loss: datagrams sent to a socket nobody reads, over IPv4 and IPv6
     * loopback, move Udp(6).RcvbufErrors and InErrors, which {@link HostCounters#countsLoss} calls loss, while the
     * datagram counts that moved with them are volume.
     */
    @Test
    void realReceiveBufferDropsMoveCountersThatCountLossAndVolumeCountersDoNot() throws Exception {
        for (String address : List.of("127.0.0.1", "::1")) {
            String udp = address.contains(":") ? "Udp6." : "Udp.";
            try (DatagramSocket unread = new DatagramSocket(new InetSocketAddress(address, 0));
                 DatagramSocket sender = new DatagramSocket(new InetSocketAddress(address, 0))) {
                unread.setReceiveBufferSize(4096);
                HostCounters.Sample before = HostCounters.sample();
                byte[] payload = new byte[1000];
                for (int i = 0; i < 200; i++) { // 200 kB into a 4 KiB buffer (8 KiB as the kernel doubles it)
                    sender.send(new DatagramPacket(payload, payload.length, unread.getLocalSocketAddress()));
                }
                HostCounters.Sample after = HostCounters.sample();
                List<String> moved = after.lossMovedSince(before);
                assertThat(moved).as(address).contains(udp + "RcvbufErrors", udp + "InErrors")
                    .doesNotContain(udp + "InDatagrams", udp + "OutDatagrams");
                assertThat(after.deltaSince(before).get(udp + "OutDatagrams")).as(address).isGreaterThanOrEqualTo(200);
            }
        }
        assertThat(HostCounters.countsLoss("dev.eth0.txDrops")).isTrue();
        assertThat(HostCounters.countsLoss("qdisc.eth0.drops")).isTrue();
        assertThat(HostCounters.countsLoss("Tcp.RetransSegs")).isTrue();
        assertThat(HostCounters.countsLoss("dev.eth0.rxBytes")).isFalse();
        assertThat(HostCounters.countsLoss("Softnet.processed")).isFalse();
    }

    @Test
    void snmp6LinesBecomeSectionDotNameKeys() {
        Map<String, Long> m = ProcFiles.parseSnmp6("""
            Ip6InReceives                   \t12
            Udp6InErrors                    \t3
            UdpLite6InErrors                \t9
            Icmp6InMsgs                     \t1
            """, Set.of("Udp6", "Ip6"));
        assertThat(m).containsOnly(Map.entry("Ip6.InReceives", 12L), Map.entry("Udp6.InErrors", 3L));
    }
}
