package io.lossprobe.control;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.accounting.LostSet;
import io.lossprobe.core.result.HistogramDecoder;
import io.lossprobe.core.result.SignedHistogram;
import java.nio.ByteBuffer;
import java.util.Base64;
import org.HdrHistogram.Histogram;

/** A flow's receive summary on the control channel; histograms travel in HdrHistogram's compressed form. */
final class SummaryCodec {
    /** Largest compressed histogram accepted, in base64 characters. */
    static final int MAX_HISTOGRAM_CHARS = 1 << 20;

    private SummaryCodec() {
    }

    /**
     * Most lost ranges one step result carries over all its flows (about 2.6 MB of JSON at the most, well inside a
     * reply's bound): each flow may carry its share, {@link #lostShare}; a flow with more goes as not known.
     */
    static final int MAX_LOST_RANGES = 1 << 16;

    /** Without lost ranges (a close that asked for none). */
    static Reply.FlowSummary encode(FlowReceiver.Summary s) {
        return encode(s, 0);
    }

    /**
     * @param lostShare the most lost ranges this flow may carry ({@link #lostShare}); 0: none asked for, the field
     *                  is null
     */
    static Reply.FlowSummary encode(FlowReceiver.Summary s, int lostShare) {
        Reply.LostRanges lost = null;
        if (lostShare > 0) {
            LostSet set = s.lostSet();
            boolean fits = set != null && set.known() && set.ranges() <= lostShare;
            lost = new Reply.LostRanges(fits, fits ? set.pairs() : new long[0]);
        }
        return new Reply.FlowSummary(s.step(), s.received(), s.duplicates(), s.reordered(), s.late(),
            s.lateDuplicates(), s.corrupt(), s.foreign(), s.warmup(), s.lossEvents(), s.lostInRuns(), s.lossBurst(),
            histogram(s.delay().atOrAboveZero()), belowZero(s.delay()), histogram(s.transit().atOrAboveZero()),
            belowZero(s.transit()), histogram(s.ipdv()), s.jitterNs(), s.warmupDelays(), s.warmupMinDelayNs(),
            s.kernelStamped(), s.receivedBySize(), lost);
    }

    /** Each flow's share of {@link #MAX_LOST_RANGES} in a step of {@code flows} flows. */
    static int lostShare(int flows) {
        return Math.max(1, Math.min(LostSet.MAX_RANGES, MAX_LOST_RANGES / Math.max(1, flows)));
    }

    /** A summary from a close that asked for no lost ranges: it must carry none. */
    static FlowReceiver.Summary decode(Reply.FlowSummary f) throws ControlProtocolException {
        return decode(f, -1, 0);
    }

    /**
     * @param wireEnd   the flow's wire end, which every lost range must lie below
     * @param lostShare the lost ranges the close asked for ({@link #lostShare}), 0 for none: then the summary must
     *                  carry none, else it must carry them (known or not), at most that many, summing to its
     *                  {@code lostInRuns}
     */
    static FlowReceiver.Summary decode(Reply.FlowSummary f, long wireEnd, int lostShare)
        throws ControlProtocolException {
        LostSet lost = lostSet(f, wireEnd, lostShare);
        try {
            return new FlowReceiver.Summary(f.step(), f.received(), f.duplicates(), f.reordered(), f.late(),
                f.lateDuplicates(), f.corrupt(), f.foreign(), f.warmup(), f.lossEvents(), f.lostInRuns(),
                f.lossBurst(), signed(f.delay(), f.delayBelowZero()), signed(f.transit(), f.transitBelowZero()),
                histogram(f.ipdv()), f.jitterNs(), f.warmupDelays(), f.warmupMinDelayNs(),
                // A server before kernel timestamps existed sends none: its receive times were all its thread's.
                f.kernelStamped() == null ? 0 : f.kernelStamped(), f.receivedBySize(), lost);
        } catch (IllegalArgumentException e) {
            throw new ControlProtocolException("bad flow summary: " + PeerText.clean(e.getMessage()));
        }
    }

    private static LostSet lostSet(Reply.FlowSummary f, long wireEnd, int lostShare)
        throws ControlProtocolException {
        Reply.LostRanges r = f.lostRanges();
        if (lostShare == 0) {
            if (r != null) {
                throw new ControlProtocolException("step result with lost ranges nobody asked for");
            }
            return null;
        }
        if (r == null) {
            throw new ControlProtocolException("step result without the lost ranges asked for");
        }
        if (!r.known()) {
            return LostSet.UNKNOWN;
        }
        if (r.pairs().length / 2 > lostShare) {
            throw new ControlProtocolException("a flow's lost ranges: " + r.pairs().length / 2 + " where at most "
                + lostShare + " may come");
        }
        LostSet set;
        try {
            set = LostSet.of(r.pairs(), wireEnd);
        } catch (IllegalArgumentException e) {
            throw new ControlProtocolException("bad lost ranges: " + PeerText.clean(e.getMessage()));
        }
        if (set.count() != f.lostInRuns()) {
            throw new ControlProtocolException("lost ranges holding " + set.count() + " numbers where lostInRuns is "
                + f.lostInRuns());
        }
        return set;
    }

    /** A step's per-interval receive counts on the control channel (null stays null). */
    static Reply.Intervals encode(io.lossprobe.core.accounting.ReceivedIntervals iv) {
        if (iv == null) {
            return null;
        }
        java.util.List<String> delay = new java.util.ArrayList<>();
        java.util.List<String> below = new java.util.ArrayList<>();
        for (SignedHistogram h : iv.delay()) {
            delay.add(histogram(h.atOrAboveZero()));
            below.add(belowZero(h));
        }
        return new Reply.Intervals(iv.received(), iv.duplicates(), iv.reordered(), delay, below);
    }

    /** @param expected the intervals the step was cut into, as this side asked for */
    static io.lossprobe.core.accounting.ReceivedIntervals decode(Reply.Intervals iv, int expected)
        throws ControlProtocolException {
        if (iv.received().length != expected) {
            throw new ControlProtocolException("intervals: " + iv.received().length + " where the step has "
                + expected);
        }
        SignedHistogram[] delay = new SignedHistogram[expected];
        for (int i = 0; i < expected; i++) {
            delay[i] = signed(iv.delay().get(i), iv.delayBelowZero().get(i));
        }
        return new io.lossprobe.core.accounting.ReceivedIntervals(iv.received(), iv.duplicates(), iv.reordered(),
            delay);
    }

    private static String belowZero(SignedHistogram h) {
        return h.magnitudesBelowZero() == null ? null : histogram(h.magnitudesBelowZero());
    }

    private static SignedHistogram signed(String atOrAboveZero, String belowZero) throws ControlProtocolException {
        return new SignedHistogram(histogram(atOrAboveZero), belowZero == null ? null : histogram(belowZero));
    }

    private static String histogram(Histogram h) {
        ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int length = h.encodeIntoCompressedByteBuffer(buf);
        return Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buf.array(), length));
    }

    private static Histogram histogram(String base64) throws ControlProtocolException {
        if (base64.length() > MAX_HISTOGRAM_CHARS) {
            throw new ControlProtocolException("histogram of " + base64.length() + " characters");
        }
        try {
            // The header's ranges checked before HdrHistogram allocates from them.
            return HistogramDecoder.decodeCompressed(ByteBuffer.wrap(Base64.getDecoder().decode(base64)));
        } catch (IllegalArgumentException e) {
            throw new ControlProtocolException("bad histogram: " + PeerText.clean(e.getMessage()));
        }
    }
}
