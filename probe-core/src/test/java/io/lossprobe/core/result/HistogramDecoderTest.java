package io.lossprobe.core.result;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class HistogramDecoderTest {
    private static ByteBuffer encoded(Histogram h) {
        ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(buf);
        return ByteBuffer.wrap(java.util.Arrays.copyOf(buf.array(), n));
    }

    @Test
    void aLossprobeHistogramRoundTrips() {
        Histogram h = Latency.newHistogram();
        for (long v = 1; v < Latency.HIGHEST_TRACKABLE_NS; v *= 3) {
            h.recordValueWithCount(v, v % 7 + 1);
        }
        Histogram back = HistogramDecoder.decodeCompressed(encoded(h));
        assertThat(back).isEqualTo(h);
        assertThat(back.getTotalCount()).isEqualTo(h.getTotalCount());
    }

    /** Our arithmetic is HdrHistogram's: the footprint it reports is its counts array plus a fixed part. */
    @Test
    void theCountsArrayLengthIsHdrHistogramsOwn() {
        long[][] cases = {{1, Latency.HIGHEST_TRACKABLE_NS, 2}, {1, Latency.HIGHEST_TRACKABLE_NS, 3},
            {1, 1_000, 1}, {1000, 1L << 40, 3}, {7, 1L << 20, 2}};
        for (long[] c : cases) {
            Histogram h = new Histogram(c[0], c[1], (int) c[2]);
            int length = HistogramDecoder.countsArrayLength(c[0], c[1], (int) c[2]);
            assertThat(h.getEstimatedFootprintInBytes() - 8L * length).as("%d..%d, %d digits", c[0], c[1], c[2])
                .isEqualTo(new Histogram(1, 2, 0).getEstimatedFootprintInBytes()
                    - 8L * HistogramDecoder.countsArrayLength(1, 2, 0));
        }
        assertThat(8L * HistogramDecoder.MAX_COUNTS).isLessThan(300_000);
    }

    /**
     * Five significant digits over 1..2^62, in a header of 60 bytes: HdrHistogram allocates a counts array of 6.2M
     * longs (49 MB) for it before it reads a count; a flow summary carries five such histograms and a step result
     * one summary per flow, so one close-step reply of five flows asked the controller for 1.2 GB. Refused here,
     * before HdrHistogram sees it.
     */
    @Test
    void aHeaderThatWouldAllocateGigabytesIsRefusedFirst() {
        long perHistogram = 8L * HistogramDecoder.countsArrayLength(1, 1L << 62, 5);
        assertThat(perHistogram).isGreaterThan(48_000_000L);
        assertThat(5 * 5 * perHistogram).isGreaterThan(1L << 30);
        byte[] bomb = CraftedHistograms.ranges(5, 1, 1L << 62);
        assertThat(bomb.length).isLessThan(100);
        assertThatThrownBy(() -> HistogramDecoder.decodeCompressed(ByteBuffer.wrap(bomb)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("5 significant digits");
        assertThatThrownBy(() -> HistogramDecoder.decodeCompressed(ByteBuffer.wrap(
            CraftedHistograms.ranges(2, 1, Long.MAX_VALUE / 2))))
            .hasMessageContaining("highest trackable value " + Long.MAX_VALUE / 2);
        assertThatThrownBy(() -> HistogramDecoder.decodeCompressed(ByteBuffer.wrap(
            CraftedHistograms.ranges(2, 0, 1000))))
            .hasMessageContaining("lowest trackable value 0");
    }

    @Test
    void everyOtherHeaderFieldIsChecked() {
        int enc = CraftedHistograms.ENCODING_COOKIE;
        long hi = Latency.HIGHEST_TRACKABLE_NS;
        assertThatThrownBy(() -> decode(CraftedHistograms.compressed(CraftedHistograms.ENCODING_COOKIE ^ 0x100, 0, 0,
            2, 1, hi, 1.0,
            new byte[0]))).hasMessageContaining("not a V2 HdrHistogram");
        assertThatThrownBy(() -> decode(CraftedHistograms.compressed(enc, Integer.MAX_VALUE, 0, 2, 1, hi, 1.0,
            new byte[0]))).hasMessageContaining("payload of " + Integer.MAX_VALUE);
        assertThatThrownBy(() -> decode(CraftedHistograms.compressed(enc, 0, 3, 2, 1, hi, 1.0, new byte[0])))
            .hasMessageContaining("normalizing offset 3");
        assertThatThrownBy(() -> decode(CraftedHistograms.compressed(enc, 0, 0, 2, 1, hi, 1e9, new byte[0])))
            .hasMessageContaining("value ratio");
        byte[] shortLength = CraftedHistograms.ranges(2, 1, hi);
        ByteBuffer.wrap(shortLength).putInt(4, shortLength.length);
        assertThatThrownBy(() -> decode(shortLength)).hasMessageContaining("compressed bytes where");
        assertThatThrownBy(() -> decode(new byte[] {0x1c, (byte) 0x84, (byte) 0x93, 0x14, 0, 0, 0, 2, 1, 2}))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> decode(new byte[3])).hasMessageContaining("shorter than its header");
    }

    private static Histogram decode(byte[] b) {
        return HistogramDecoder.decodeCompressed(ByteBuffer.wrap(b));
    }
}
