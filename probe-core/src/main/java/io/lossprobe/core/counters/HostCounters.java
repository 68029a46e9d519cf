package io.lossprobe.core.counters;

import io.lossprobe.core.result.Cpu;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Samples the host's network counters and CPU time so a step can report their deltas: /proc/net/snmp (Udp, Tcp),
 * /proc/net/snmp6 (Udp6, Ip6), /proc/net/netstat (TcpExt), /proc/net/dev (every interface), /proc/net/softnet_stat (the
 * per-CPU receive
 * backlog's drops), /proc/stat, and this process's CPU time.
 */
public final class HostCounters {
    private static final Set<String> SNMP_SECTIONS = Set.of("Udp", "Tcp", "Ip");
    private static final Set<String> NETSTAT_SECTIONS = Set.of("TcpExt");
    private static final Set<String> SNMP6_SECTIONS = Set.of("Udp6", "Ip6");
    /**
     * The words of a counter's name that say it counts packets dropped, refused, in error or repaired (Udp.InErrors,
     * Udp6.RcvbufErrors, Ip.OutDiscards, Tcp.RetransSegs, TcpExt.TCPBacklogDrop, dev.eth0.txDrops,
     * Softnet.dropped, qdisc.eth0.drops ...), as opposed to volume counters (datagrams, segments, bytes, packets).
     */
    private static final Pattern LOSS_NAME = Pattern.compile(
        "(?i).*(err|drop|discard|retrans|overflow|fail|lost|loss|noroute|fifo|frame|carrier|collision|prune).*");

    private HostCounters() {
    }

    /** One sample of every counter, taken now. */
    public static Sample sample() {
        Map<String, Long> counters = new HashMap<>();
        counters.putAll(ProcFiles.parseSnmp(ProcFiles.read("/proc/net/snmp"), SNMP_SECTIONS));
        counters.putAll(ProcFiles.parseSnmp(ProcFiles.read("/proc/net/netstat"), NETSTAT_SECTIONS));
        counters.putAll(ProcFiles.parseSnmp6(ProcFiles.read("/proc/net/snmp6"), SNMP6_SECTIONS));
        counters.putAll(ProcFiles.parseNetDev(ProcFiles.read("/proc/net/dev")));
        counters.putAll(ProcFiles.parseSoftnet(ProcFiles.read("/proc/net/softnet_stat")));
        long[] cpu = ProcFiles.parseCpuLine(ProcFiles.read("/proc/stat"));
        return new Sample(counters, cpu[0], cpu[1], processCpuNs(), System.nanoTime());
    }

    /** Whether {@code key} counts packets dropped, refused, in error or repaired (see {@link #LOSS_NAME}). */
    public static boolean countsLoss(String key) {
        return LOSS_NAME.matcher(key.substring(key.lastIndexOf('.') + 1)).matches();
    }

    static long processCpuNs() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getProcessCpuTime();
        }
        return -1;
    }

    /**
     * A moment's counters.
     *
     * @param cpuBusyJiffies  host busy time over all CPUs (/proc/stat)
     * @param cpuTotalJiffies host total time over all CPUs
     * @param processCpuNs    this JVM's CPU time
     */
    public record Sample(Map<String, Long> counters, long cpuBusyJiffies, long cpuTotalJiffies, long processCpuNs,
                         long wallNs) {

        /** Counters that changed between {@code before} and this sample (after - before), zero deltas left out. */
        public Map<String, Long> deltaSince(Sample before) {
            Map<String, Long> out = new HashMap<>();
            counters.forEach((key, value) -> {
                Long old = before.counters.get(key);
                long delta = old == null ? value : value - old;
                if (delta != 0) {
                    out.put(key, delta);
                }
            });
            return out;
        }

        /**
         * The loss counters ({@link #countsLoss}) whose values differ between {@code before} and this sample, sorted;
         * a counter present in only one of them counts as moved.
         */
        public List<String> lossMovedSince(Sample before) {
            Set<String> keys = new TreeSet<>(counters.keySet());
            keys.addAll(before.counters.keySet());
            List<String> moved = new ArrayList<>();
            for (String key : keys) {
                if (countsLoss(key) && !Objects.equals(counters.get(key), before.counters.get(key))) {
                    moved.add(key);
                }
            }
            return moved;
        }

        public Cpu cpuSince(Sample before) {
            long wall = wallNs - before.wallNs;
            double process = wall <= 0 || processCpuNs < 0 ? 0 : 100.0 * (processCpuNs - before.processCpuNs) / wall;
            long total = cpuTotalJiffies - before.cpuTotalJiffies;
            double host = total <= 0 ? 0 : 100.0 * (cpuBusyJiffies - before.cpuBusyJiffies) / total;
            return new Cpu(round1(process), round1(host));
        }

        private static double round1(double v) {
            return Math.round(v * 10) / 10.0;
        }
    }
}
