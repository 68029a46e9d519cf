package io.lossprobe.analysis;

import io.lossprobe.core.result.Echo;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.CounterDescriptor;
import io.lossprobe.core.transport.CounterDescriptor.Category;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The numbers reports, comparisons and checks read from one step, derived in one place so they mean the same
 * everywhere. Missing counters are tolerated: a value that cannot be derived is {@code NaN}.
 *
 * @param offeredRate      the target rate (messages/s); for a {@code max} level, the achieved send rate
 * @param achievedRate     messages received per second over the window (the achieved receive rate; not TPS,
 *                         which counts round trips: {@code tps})
 * @param achievedSendRate messages sent per second over the window
 * @param retransmitsPer1k retransmissions per 1,000 messages sent, NaN where the transport has none
 * @param naksPer1k        NAKs per 1,000 messages sent, NaN where the transport reports none
 * @param nicInterface     the interface the NIC columns describe (the busiest one), or "" when none is known
 * @param socketDrops      datagrams the kernel dropped at the receiving sockets, NaN where the transport has none
 * @param delayUncertaintyMs between hosts: each delay is true to +- this (the clock offset's bound), else NaN
 * @param tps              echo mode: replies received per second, else NaN
 * @param rttMs            echo mode: round trip p50, p90, p99, p99.9 (ms), else NaNs
 * @param warnings         how many warnings the step carries
 * @param messageSize      bytes per message of the step, 0 when the file does not say (one size: the plan's)
 * @param probeRttMs       {@code run --probe echo}: the probe flow's round trip p50, p90, p99, p99.9 (ms) beside
 *                         the step, else NaNs (also when the probe got no reply)
 * @param probeLost        the probe's requests without a reply ({@code echo.roundTripLost}), NaN without a probe
 * @param repair           what repairing the path's loss cost a reliable Aeron step (NAKs and retransmits per lost
 *                         frame, the delay's tail share), null where nothing was repaired or it cannot be told
 */
public record StepMetrics(String transport, String level, long targetRate, double offeredRate, double achievedRate,
                          double achievedSendRate, double lossPercent, long sent, long lost, long duplicates,
                          long reordered, double meanDelayMs, double p50DelayMs, double p90DelayMs,
                          double p99DelayMs, double p999DelayMs, double maxDelayMs, double processCpuPercent,
                          double hostCpuPercent, String nicInterface, double nicInMbps, double nicOutMbps,
                          double nicInPacketsPerSecond, double nicOutPacketsPerSecond, double retransmits,
                          double retransmitsPer1k, double naks, double naksPer1k, boolean saturated,
                          double socketDrops, double delayUncertaintyMs, double tps, double[] rttMs, int warnings,
                          int messageSize, double[] probeRttMs, double probeLost, RepairCost repair) {

    private static final String TCP_RETRANS = "Tcp.RetransSegs";

    /**
     * {@code s}'s figures, its transport's counters read as {@code run} declares them; a step that does not record
     * its message size (a file from before --sizes) has the plan's.
     */
    public static StepMetrics of(RunResult run, StepResult s) {
        return of(s, run.counters(s.transport()), run.plan() == null ? 0 : run.plan().messageSize());
    }

    /** Every step of {@code run}, in order. */
    public static List<StepMetrics> all(RunResult run) {
        return run.steps().stream().map(s -> of(run, s)).toList();
    }

    static StepMetrics of(StepResult s, List<CounterDescriptor> declared, int planSize) {
        double windowS = s.windowNs() > 0 ? s.windowNs() / 1e9 : Double.NaN;
        long sent = s.counts().sent();
        boolean hasDelay = s.delay() != null && s.delay().count() > 0;
        Nic nic = Nic.busiest(s.hostCounters());
        double retrans = retransmits(s, declared);
        double naks = declared.isEmpty() ? LegacyCounters.naks(s.transportCounters())
            : sum(s.transportCounters(), declared, Category.NAK);
        // A run of both directions: each direction is a series of its own ("udp reverse").
        return new StepMetrics(s.series(), s.level().toString(), s.targetRate(),
            s.targetRate() > 0 ? s.targetRate() : s.achievedSendRate(), s.achievedReceiveRate(),
            s.achievedSendRate(), s.counts().lossPercent(), sent, s.counts().lost(), s.counts().duplicates(),
            s.counts().reordered(),
            hasDelay ? s.delay().meanNs() / 1e6 : Double.NaN, hasDelay ? s.delay().p50Ns() / 1e6 : Double.NaN,
            hasDelay ? s.delay().p90Ns() / 1e6 : Double.NaN, hasDelay ? s.delay().p99Ns() / 1e6 : Double.NaN,
            hasDelay ? s.delay().p999Ns() / 1e6 : Double.NaN, hasDelay ? s.delay().maxNs() / 1e6 : Double.NaN,
            s.cpu() == null ? Double.NaN : s.cpu().processPercent(),
            s.cpu() == null ? Double.NaN : s.cpu().hostPercent(),
            nic.name, nic.rxBytes * 8 / 1e6 / windowS, nic.txBytes * 8 / 1e6 / windowS, nic.rxPackets / windowS,
            nic.txPackets / windowS, retrans, per1k(retrans, repairSpan(s, sent)), naks,
            per1k(naks, repairSpan(s, sent)),
            s.saturated(),
            s.socketDrops() == null ? Double.NaN : s.socketDrops(),
            s.delay() != null && s.delay().uncertaintyNs() != null ? s.delay().uncertaintyNs() / 1e6 : Double.NaN,
            s.echo() == null ? Double.NaN : s.echo().tps(), rtt(s.echo()), s.warnings().size(),
            s.messageSize() == null ? planSize : s.messageSize(), rtt(probeEcho(s)),
            probeEcho(s) == null ? Double.NaN : probeEcho(s).roundTripLost(), RepairCost.of(s));
    }

    /** The echo figures of the step's {@code --probe} flow, null when the step had none. */
    private static Echo probeEcho(StepResult s) {
        return s.probe() == null ? null : s.probe().echo();
    }

    private static double[] rtt(Echo echo) {
        if (echo == null || echo.rtt() == null || echo.rtt().count() == 0) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN, Double.NaN};
        }
        var r = echo.rtt();
        return new double[] {r.p50Ns() / 1e6, r.p90Ns() / 1e6, r.p99Ns() / 1e6, r.p999Ns() / 1e6};
    }

    /** Whether a {@code --probe} flow ran beside the step. */
    public boolean probe() {
        return !Double.isNaN(probeLost);
    }

    /** The one-way delay percentiles p50, p90, p99, p99.9 (ms), NaNs when the step recorded none. */
    public double[] delayMs() {
        return new double[] {p50DelayMs, p90DelayMs, p99DelayMs, p999DelayMs};
    }

    /** Whether the step ran in echo mode (it has a round trip). */
    public boolean echo() {
        return !Double.isNaN(tps);
    }

    /** Loss as a fraction (0..1). */
    public double lossRatio() {
        return lossPercent / 100.0;
    }

    /**
     * The messages a step's repair counters (NAKs, retransmits) are counted over: Aeron reads its driver's counters
     * over the whole step (warm-up, window and drain: the only moments when no NAK is in flight), and counts the
     * messages its
     * publications accepted over the same span; other transports' repair counters cover the window.
     */
    private static long repairSpan(StepResult s, long windowSent) {
        Long accepted = s.transportCounters().get("aeron.messagesAccepted");
        return accepted != null && accepted > 0 ? accepted : windowSent;
    }

    private static double per1k(double count, long sent) {
        return Double.isNaN(count) || sent == 0 ? Double.NaN : 1000.0 * count / sent;
    }

    /**
     * Retransmissions: the step's counters the transport declares as {@link Category#RETRANSMIT}; failing those, for
     * a TCP transport, the host's Tcp.RetransSegs delta (host-wide, so other TCP traffic on the host adds to it).
     * NaN when neither applies: raw UDP never retransmits.
     */
    static double retransmits(StepResult s, List<CounterDescriptor> declared) {
        double own = declared.isEmpty() ? LegacyCounters.retransmits(s.transportCounters())
            : sum(s.transportCounters(), declared, Category.RETRANSMIT);
        if (!Double.isNaN(own)) {
            return own;
        }
        if (s.transport().toLowerCase(Locale.ROOT).contains("tcp")) {
            Long host = s.hostCounters().get(TCP_RETRANS);
            return host == null ? 0.0 : host;
        }
        return Double.NaN;
    }

    /** The sum of the step's counters declared in {@code category}; NaN when the step reports none of them. */
    static double sum(Map<String, Long> counters, List<CounterDescriptor> declared, Category category) {
        double sum = 0;
        boolean any = false;
        for (CounterDescriptor d : declared) {
            Long v = d.category() == category ? counters.get(d.key()) : null;
            if (v != null) {
                sum += v;
                any = true;
            }
        }
        return any ? sum : Double.NaN;
    }

    /**
     * One interface's traffic. The NIC columns describe the single busiest interface (most rx+tx bytes in the
     * step), not a sum: on the embedded run the traffic is on {@code lo}; between two hosts it is the NIC, and
     * summing would count the same bytes twice on bonds, VLANs and bridges.
     */
    record Nic(String name, double rxBytes, double txBytes, double rxPackets, double txPackets) {
        static final Nic NONE = new Nic("", Double.NaN, Double.NaN, Double.NaN, Double.NaN);

        static Nic busiest(Map<String, Long> host) {
            Nic best = NONE;
            double bestBytes = -1;
            for (String key : host.keySet()) {
                if (!key.startsWith("dev.") || !key.endsWith(".rxBytes")) {
                    continue;
                }
                String name = key.substring(4, key.length() - ".rxBytes".length());
                String p = "dev." + name + ".";
                Nic nic = new Nic(name, get(host, p + "rxBytes"), get(host, p + "txBytes"),
                    get(host, p + "rxPackets"), get(host, p + "txPackets"));
                double bytes = nic.rxBytes + nic.txBytes;
                if (bytes > bestBytes) {
                    best = nic;
                    bestBytes = bytes;
                }
            }
            return best;
        }

        private static double get(Map<String, Long> host, String key) {
            Long v = host.get(key);
            return v == null ? 0.0 : v;
        }
    }
    /**
     * The host's CPU, over all its cores, from which a step is flagged: near saturation the senders, receivers and
     * the kernel's network work compete for the cores, and delay and loss bend with the instrument's own strain.
     */
    public static final double SATURATED_HOST_CPU_PERCENT = 90;

    /** The host's CPU was near saturation during the step ({@link #SATURATED_HOST_CPU_PERCENT} or more). */
    public boolean hostCpuSaturated() {
        return !Double.isNaN(hostCpuPercent) && hostCpuPercent >= SATURATED_HOST_CPU_PERCENT;
    }
}
