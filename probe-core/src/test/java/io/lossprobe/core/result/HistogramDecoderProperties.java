package io.lossprobe.core.result;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Crafted headers and bytes: whatever a compressed histogram says, decoding either refuses it with an
 * IllegalArgumentException or returns a histogram within lossprobe's bounds, never allocating more than
 * {@link HistogramDecoder#MAX_COUNTS} counts (and never throwing anything else).
 */
class HistogramDecoderProperties {
    @Property(tries = 2000)
    void anyHeaderIsRefusedOrBounded(@ForAll @IntRange(min = -2, max = 8) int digits, @ForAll long lowest,
                                     @ForAll long highest, @ForAll int payloadLength, @ForAll int offset,
                                     @ForAll boolean ratioOne, @ForAll @Size(max = 64) byte[] payload) {
        byte[] b = CraftedHistograms.compressed(CraftedHistograms.ENCODING_COOKIE, payloadLength, offset, digits,
            lowest, highest, ratioOne ? 1.0 : 2.0, payload);
        assertRefusedOrBounded(b);
    }

    /** The ranges near the edges, where the search for a bomb would look. */
    @Property(tries = 2000)
    void rangesNearTheBoundsAreRefusedOrBounded(@ForAll @IntRange(min = 0, max = 5) int digits,
                                                @ForAll @IntRange(min = 0, max = 2000) int lowest,
                                                @ForAll @IntRange(min = 0, max = 62) int highestBits) {
        assertRefusedOrBounded(CraftedHistograms.ranges(digits, lowest, 1L << highestBits));
    }

    @Property(tries = 2000)
    void anyBytesAreRefusedOrBounded(@ForAll @Size(max = 200) byte[] bytes, @ForAll boolean cookie) {
        if (cookie && bytes.length >= 4) {
            ByteBuffer.wrap(bytes).putInt(0, CraftedHistograms.COMPRESSED_COOKIE);
        }
        assertRefusedOrBounded(bytes);
    }

    private static void assertRefusedOrBounded(byte[] b) {
        org.HdrHistogram.Histogram h;
        try {
            h = HistogramDecoder.decodeCompressed(ByteBuffer.wrap(b));
        } catch (IllegalArgumentException refused) {
            assertThat(refused.getMessage()).isNotBlank();
            return;
        }
        assertThat(HistogramDecoder.countsArrayLength(h.getLowestDiscernibleValue(), h.getHighestTrackableValue(),
            h.getNumberOfSignificantValueDigits())).isLessThanOrEqualTo(HistogramDecoder.MAX_COUNTS);
        assertThat(h.getHighestTrackableValue()).isLessThanOrEqualTo(HistogramDecoder.MAX_HIGHEST);
    }
}
