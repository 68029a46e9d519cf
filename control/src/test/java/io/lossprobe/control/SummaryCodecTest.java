package io.lossprobe.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.result.CraftedHistograms;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.LossBurst;
import java.nio.ByteBuffer;
import java.util.Base64;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/**
 * A step result's histograms come from the peer. One whose header asks for five significant digits over 1..2^62
 * made the controller allocate a 49 MB counts array per histogram (five a flow) before reading a single count;
 * it is refused, and the session ends with the reason, before HdrHistogram sees the header.
 */
class SummaryCodecTest {
    private static String base64(Histogram h) {
        ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(buf);
        return Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buf.array(), n));
    }

    private static Reply.FlowSummary summary(String delay) {
        String empty = base64(Latency.newHistogram());
        return new Reply.FlowSummary(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, LossBurst.NONE, delay, null, empty, null, empty,
            0, 0, 0, 0L, null, null);
    }

    @Test
    void aGenuineSummaryDecodes() throws Exception {
        Histogram h = Latency.newHistogram();
        h.recordValueWithCount(12_345, 3);
        assertThat(SummaryCodec.decode(summary(base64(h))).delay().count()).isEqualTo(3);
    }

    @Test
    void aHistogramHeaderAskingForTensOfMegabytesIsRefusedBeforeItIsAllocated() {
        String bomb = Base64.getEncoder().encodeToString(CraftedHistograms.ranges(5, 1, 1L << 62));
        assertThat(bomb.length()).isLessThan(120);
        assertThatThrownBy(() -> SummaryCodec.decode(summary(bomb)))
            .isInstanceOf(ControlProtocolException.class)
            .hasMessage("bad histogram: histogram of 5 significant digits (lossprobe's have 1 to 3)");
        String wide = Base64.getEncoder().encodeToString(CraftedHistograms.ranges(2, 1, Long.MAX_VALUE / 2));
        assertThatThrownBy(() -> SummaryCodec.decode(summary(wide)))
            .isInstanceOf(ControlProtocolException.class).hasMessageContaining("highest trackable value");
    }
}
