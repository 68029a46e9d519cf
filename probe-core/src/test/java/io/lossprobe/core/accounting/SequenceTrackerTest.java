package io.lossprobe.core.accounting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SequenceTrackerTest {
    @Test
    void inOrderWithoutLoss() {
        SequenceTracker t = new SequenceTracker(64);
        for (long s = 0; s < 1000; s++) {
            assertThat(t.onSequence(s)).isEqualTo(SequenceTracker.NEW);
        }
        t.finish(1000);
        assertThat(t.received()).isEqualTo(1000);
        assertThat(t.lostInRuns()).isZero();
        assertThat(t.lossEvents()).isZero();
    }

    @Test
    void duplicateAndReorderAreToldApart() {
        SequenceTracker t = new SequenceTracker(64);
        assertThat(t.onSequence(0)).isEqualTo(SequenceTracker.NEW);
        assertThat(t.onSequence(2)).isEqualTo(SequenceTracker.NEW);
        assertThat(t.onSequence(1)).isEqualTo(SequenceTracker.REORDERED);
        assertThat(t.onSequence(1)).isEqualTo(SequenceTracker.DUPLICATE);
        assertThat(t.onSequence(2)).isEqualTo(SequenceTracker.DUPLICATE);
        t.finish(3);
        assertThat(t.received()).isEqualTo(3);
        assertThat(t.duplicates()).isEqualTo(2);
        assertThat(t.reordered()).isEqualTo(1);
    }

    @Test
    void aSequenceFarAheadSlidesWithoutWalkingTheGap() {
        SequenceTracker t = new SequenceTracker(64);
        for (long s = 0; s < 10; s++) {
            t.onSequence(s);
        }
        long far = 999_999_999_999L;
        t.onSequence(far); // would take minutes if the gap were walked one by one
        t.finish(far + 1);
        assertThat(t.received()).isEqualTo(11);
        assertThat(t.lossEvents()).isEqualTo(1);
        assertThat(t.lostInRuns()).isEqualTo(far - 10);
        assertThat(t.bursts().toResult().max()).isEqualTo(far - 10);
    }

    @Test
    void anArrivalBehindTheWindowIsLateAndStaysLost() {
        SequenceTracker t = new SequenceTracker(64);
        t.onSequence(0);
        t.onSequence(200); // window now covers [192, 256)
        assertThat(t.onSequence(5)).isEqualTo(SequenceTracker.LATE);
        assertThat(t.onSequence(191)).isEqualTo(SequenceTracker.LATE);
        assertThat(t.onSequence(5)).as("a second copy of a late message").isEqualTo(SequenceTracker.LATE_DUPLICATE);
        assertThat(t.onSequence(0)).as("received in time, then again too late").isEqualTo(
            SequenceTracker.LATE_DUPLICATE);
        assertThat(t.onSequence(192)).isEqualTo(SequenceTracker.REORDERED);
        t.finish(201);
        assertThat(t.late()).isEqualTo(2);
        assertThat(t.lateDuplicates()).isEqualTo(2);
        assertThat(t.received()).isEqualTo(3);
        assertThat(t.lostInRuns()).isEqualTo(201 - 3);
        assertThat(t.lossEvents()).isEqualTo(2); // 1..191 and 193..199
    }

    @Test
    void theWindowWrapsManyTimes() {
        SequenceTracker t = new SequenceTracker(128);
        long sent = 128 * 1000 + 17;
        for (long s = 0; s < sent; s++) {
            if (s % 129 != 0) {
                t.onSequence(s);
            }
        }
        t.finish(sent);
        long lost = (sent + 128) / 129;
        assertThat(t.lostInRuns()).isEqualTo(lost);
        assertThat(t.lossEvents()).isEqualTo(lost);
        assertThat(t.received()).isEqualTo(sent - lost);
    }

    @Test
    void finishWithNothingReceivedIsOneRun() {
        SequenceTracker t = new SequenceTracker(64);
        t.finish(5000);
        assertThat(t.lostInRuns()).isEqualTo(5000);
        assertThat(t.lossEvents()).isEqualTo(1);
        assertThat(t.bursts().toResult().histogram()).containsEntry("4097-8192", 1L);
    }

    @Test
    void windowMustBeAPowerOfTwo() {
        assertThatThrownBy(() -> new SequenceTracker(100)).isInstanceOf(IllegalArgumentException.class);
        assertThat(SequenceTracker.windowFor(1_000_000, 2.0)).isEqualTo(1 << 21);
        assertThat(SequenceTracker.windowFor(10, 1.0)).isEqualTo(4096);
        assertThat(SequenceTracker.windowFor(100_000_000, 10)).isEqualTo(1 << 22);
    }

    @Test
    void burstBucketsAreLabelled() {
        LossBurstHistogram h = new LossBurstHistogram();
        for (long len : new long[] {1, 2, 3, 4, 5, 8, 9, 100_000}) {
            h.record(len);
        }
        assertThat(h.toResult().histogram()).containsExactly(
            java.util.Map.entry("1", 1L), java.util.Map.entry("2", 1L), java.util.Map.entry("3-4", 2L),
            java.util.Map.entry("5-8", 2L), java.util.Map.entry("9-16", 1L), java.util.Map.entry("65537-131072", 1L));
        assertThat(h.toResult().max()).isEqualTo(100_000);
        assertThat(h.toResult().mean()).isEqualTo((1 + 2 + 3 + 4 + 5 + 8 + 9 + 100_000) / 8.0);
    }
}
