package io.lossprobe.analysis;

import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.StepResult;
import java.util.Locale;
import java.util.Map;

/**
 * What repairing the path's loss cost a reliable Aeron step, from counters the step already holds (docs/aeron.md,
 * "The repair tail"), all over the same span (the whole step: warm-up, window and drain, read while no NAK was in
 * flight): the frames the receiving driver found missing on the wire ({@code aeron.lossReportFrames}), the NAKs it
 * sent for this run's streams ({@code aeron.rcvNaksSent}) and the retransmissions the sending driver made
 * ({@code aeron.retransmitsSent}), with their ratios.
 *
 * <p>The receiver records each message's delay, not whether it waited for a repair (for its own retransmission, or
 * delivered in order behind another message's), so the delay is not split by cause. {@code tailDelayShare} is what
 * the step's figures can say: the share of all its messages' delay that lies beyond the median message's,
 * {@code (mean - p50) / mean}. Where it is most of the delay and the step repaired loss, the tail is where the
 * repairs waited; the lab comparison in docs/aeron.md (the same loss, no loss, another driver) is what says whose
 * the tail is.
 *
 * @param lostFrames              frames found missing and repaired ({@code aeron.lossReportFrames})
 * @param naks                    NAKs the receiving driver sent for them ({@code aeron.rcvNaksSent})
 * @param retransmits             retransmissions the sending driver made, NaN when the step does not say
 * @param naksPerLostFrame        {@code naks / lostFrames}: 1 would be one request per lost frame
 * @param retransmitsPerNak       {@code retransmits / naks} (Aeron answers repeated NAKs for one range once per
 *                                linger), NaN without retransmits
 * @param retransmitsPerLostFrame {@code retransmits / lostFrames}; a retransmission resends one NAKed range, of
 *                                one frame or of several (a datagram carries several frames at higher rates)
 * @param resentPerLostByte       {@code aeron.retransmittedBytes / aeron.lossReportBytes}: 1 when every missing
 *                                byte was resent once, above it when ranges were resent again; NaN without them
 * @param tailDelayShare          {@code (mean - p50) / mean} of the step's one-way delay (0..1), NaN without delays
 */
public record RepairCost(long lostFrames, long naks, double retransmits, double naksPerLostFrame,
                         double retransmitsPerNak, double retransmitsPerLostFrame, double resentPerLostByte,
                         double tailDelayShare) {
    static final String LOST_FRAMES = "aeron.lossReportFrames";
    static final String NAKS = "aeron.rcvNaksSent";
    static final String RETRANSMITS = "aeron.retransmitsSent";
    static final String LOST_BYTES = "aeron.lossReportBytes";
    static final String RESENT_BYTES = "aeron.retransmittedBytes";
    /** More than this share of the delay beyond the median: the tail dominates the step's delay. */
    static final double DOMINANT_SHARE = 0.5;

    /**
     * The step's repair cost; null where there is none to tell: no loss repaired (nothing found missing, or
     * unreliable mode, which fills gaps and sends no NAK), another transport, or echo mode (the driver's
     * retransmit counter there covers the replies too).
     */
    static RepairCost of(StepResult s) {
        Map<String, Long> c = s.transportCounters();
        Long frames = c.get(LOST_FRAMES);
        Long naks = c.get(NAKS);
        if (s.echo() != null || frames == null || naks == null || frames <= 0 || naks <= 0) {
            return null;
        }
        Long retransmits = c.get(RETRANSMITS);
        double resent = retransmits == null ? Double.NaN : retransmits;
        Long lostBytes = c.get(LOST_BYTES);
        Long resentBytes = c.get(RESENT_BYTES);
        double perByte = lostBytes == null || resentBytes == null || lostBytes == 0 ? Double.NaN
            : (double) resentBytes / lostBytes;
        return new RepairCost(frames, naks, resent, (double) naks / frames, resent / naks, resent / frames, perByte,
            tailShare(s.delay()));
    }

    /**
     * {@code (mean - p50) / mean}; NaN without delays, with a median below zero, or between hosts when the clock
     * bound is a tenth of the mean or more (the share would then be the clocks').
     */
    static double tailShare(Latency d) {
        if (d == null || d.count() == 0 || d.meanNs() <= 0 || d.p50Ns() < 0) {
            return Double.NaN;
        }
        if (d.uncertaintyNs() != null && 10.0 * d.uncertaintyNs() >= d.meanNs()) {
            return Double.NaN;
        }
        return Math.max(0, (d.meanNs() - d.p50Ns()) / d.meanNs());
    }

    /** More than half of the step's delay lies beyond its median while it repaired loss. */
    public boolean dominatesDelay() {
        return !Double.isNaN(tailDelayShare) && tailDelayShare > DOMINANT_SHARE;
    }

    /**
     * The figures in words: "77 % of all delay is beyond the median (3.1 ms): 163,688 NAKs for 3,285 lost frames
     * (50 per frame), 7,091 retransmits (2.2 per frame)".
     */
    String words(double p50Ms) {
        StringBuilder sb = new StringBuilder();
        if (!Double.isNaN(tailDelayShare)) {
            sb.append(String.format(Locale.ROOT, "%.0f %% of all delay is beyond the median (%s): ",
                100 * tailDelayShare, ChartParts.ms(p50Ms)));
        }
        sb.append(String.format(Locale.ROOT, "%,d NAKs for %,d lost frames (%s per frame)", naks, lostFrames,
            ChartParts.sig2(naksPerLostFrame)));
        if (!Double.isNaN(retransmits)) {
            sb.append(String.format(Locale.ROOT, ", %,.0f retransmits (%s per frame)", retransmits,
                ChartParts.sig2(retransmitsPerLostFrame)));
        }
        return sb.toString();
    }
}
