package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.accounting.PacketSlots;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code --packets}: a flow's rows from its receiver's record, each accounting rule against the flow's counts. */
class PacketStepTest {
    private static final int RUN = 7;
    private static final int SIZE = 64;
    private static final MessageAuth KEY = new MessageAuth(0x1234, 0x5678);
    private FlowReceiver flow;

    record Row(long seq, String status, long intended, long sent, long received, boolean reordered, int duplicates,
               int lateDuplicates) {
    }

    @BeforeEach
    void begin() {
        flow = new FlowReceiver(0, RUN, SIZE, 4, false, KEY);
    }

    /** Begins step 1 recorded into fresh slots. */
    private PacketSlots record(int every, int capacity) {
        flow.beginStep(1, 4096);
        PacketSlots slots = new PacketSlots(every, capacity);
        flow.capturePackets(slots);
        return slots;
    }

    /** Sequence {@code seq} of step 1, sent at {@code 1000 * seq} (actual 10 ns later), arriving at {@code at}. */
    private void data(long seq, long at) {
        long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, 0);
        long w1 = MessageHeader.word1(RUN, 1, SIZE);
        long intended = 1000 * seq;
        flow.onMessage(w0, w1, seq, intended, intended + 10, KEY.tag(w0, w1, seq, intended, intended + 10), SIZE,
            at);
    }

    private static List<Row> rows(PacketSlots slots, SentTimes sent, FailedRanges failed, long wireEnd,
                                  FlowReceiver.Summary s, long lateAfter, long lateDuplicatesAfter)
        throws IOException {
        List<Row> out = new ArrayList<>();
        PacketStep.rows(0, slots, sent, failed, wireEnd, s.late() + lateAfter,
            s.lateDuplicates() + lateDuplicatesAfter,
            (f, seq, status, intended, actual, received, reordered, dups, lateDups) -> out.add(new Row(seq, status,
                intended, actual, received, reordered, dups, lateDups)));
        return out;
    }

    private static long count(List<Row> rows, String status) {
        return rows.stream().filter(r -> r.status().equals(status)).count();
    }

    @Test
    void everyRowAddsUpToTheFlowsCounts() throws IOException {
        FailedRanges failed = new FailedRanges();
        failed.add(10, 5); // 10..14 accepted, never left
        flow.beginStep(1, 64, failed);
        PacketSlots slots = new PacketSlots(1, 1000);
        flow.capturePackets(slots);
        data(0, 5_000);
        data(2, 6_000);
        data(1, 7_000);   // reordered
        data(2, 8_000);   // duplicate
        data(300, 9_000); // slides the 64-bit window past 3..235
        data(4, 9_500);   // behind the window: lost, and late
        data(4, 9_600);   // and its copy: a late duplicate
        FlowReceiver.Summary s = flow.closeStep(302);
        List<Row> rows = rows(slots, null, failed, 302, s, 0, 0);

        assertThat(rows).hasSize(302);
        assertThat(rows).extracting(Row::seq).containsExactlyElementsOf(
            java.util.stream.LongStream.range(0, 302).boxed().toList());
        long sent = 302 - failed.total();
        assertThat(rows.size() - count(rows, PacketStep.FAILED)).isEqualTo(sent);
        assertThat(count(rows, PacketStep.RECEIVED)).isEqualTo(s.received()).isEqualTo(4);
        assertThat(count(rows, PacketStep.LOST) + count(rows, PacketStep.LATE)).isEqualTo(sent - s.received())
            .isEqualTo(s.lostInRuns());
        assertThat(count(rows, PacketStep.LATE)).isEqualTo(s.late()).isEqualTo(1);
        assertThat(rows.stream().filter(Row::reordered).count()).isEqualTo(s.reordered()).isEqualTo(1);
        assertThat(rows.stream().mapToInt(Row::duplicates).sum()).isEqualTo(s.duplicates()).isEqualTo(1);
        assertThat(rows.stream().mapToInt(Row::lateDuplicates).sum()).isEqualTo(s.lateDuplicates()).isEqualTo(1);
        assertThat(rows.get(1)).isEqualTo(new Row(1, PacketStep.RECEIVED, 1000, 1010, 7_000, true, 0, 0));
        assertThat(rows.get(4)).isEqualTo(new Row(4, PacketStep.LATE, 4000, 4010, 9_500, false, 0, 1));
        // The receiver never saw 3: no times without the sender's.
        assertThat(rows.get(3)).isEqualTo(new Row(3, PacketStep.LOST, PacketStep.NONE, PacketStep.NONE,
            PacketStep.NONE, false, 0, 0));
        assertThat(rows.get(12).status()).isEqualTo(PacketStep.FAILED);
    }

    @Test
    void theSendersTimesFillTheRowsOfWhatNeverArrived() throws IOException {
        PacketSlots slots = record(1, 10);
        data(0, 5_000);
        FlowReceiver.Summary s = flow.closeStep(2);
        long[] intended = new long[10];
        long[] actual = new long[10];
        intended[1] = 1000;
        actual[1] = 1020;
        List<Row> rows = rows(slots, new SentTimes(intended, actual), new FailedRanges(), 2, s, 0, 0);
        assertThat(rows.get(1)).isEqualTo(new Row(1, PacketStep.LOST, 1000, 1020, PacketStep.NONE, false, 0, 0));
    }

    /**
     * The result is frozen while the receivers still run: of two stragglers after the close, the one it counted is
     * late, the one after is lost, as in the result; the same for late duplicates.
     */
    @Test
    void afterTheCloseOnlyWhatTheResultCountedIsLate() throws IOException {
        PacketSlots slots = record(1, 10);
        data(0, 5_000);
        data(1, 5_100);
        FlowReceiver.Summary s = flow.closeStep(4); // 2 and 3 lost
        data(2, 50_000);  // late after close, counted (rank 1)
        data(0, 50_100);  // late duplicate, counted (rank 1)
        long frozenLate = flow.lateAfterClose(1);
        long frozenDuplicates = flow.lateDuplicatesAfterClose(1);
        data(3, 60_000);  // after the result froze
        data(1, 60_100);

        List<Row> rows = rows(slots, null, new FailedRanges(), 4, s, frozenLate, frozenDuplicates);
        assertThat(rows).extracting(Row::status).containsExactly(PacketStep.RECEIVED, PacketStep.RECEIVED,
            PacketStep.LATE, PacketStep.LOST);
        assertThat(rows.get(2).received()).isEqualTo(50_000);
        assertThat(rows.get(3).received()).isEqualTo(PacketStep.NONE);
        assertThat(rows).extracting(Row::lateDuplicates).containsExactly(1, 0, 0, 0);

        List<Row> later = rows(slots, null, new FailedRanges(), 4, s, flow.lateAfterClose(1),
            flow.lateDuplicatesAfterClose(1));
        assertThat(later).extracting(Row::status).containsExactly(PacketStep.RECEIVED, PacketStep.RECEIVED,
            PacketStep.LATE, PacketStep.LATE);
        assertThat(later).extracting(Row::lateDuplicates).containsExactly(1, 1, 0, 0);
    }

    @Test
    void aSampleKeepsEveryNthNumberAndTheLimitTheFirstOnes() throws IOException {
        flow.beginStep(1, 4096);
        PacketSlots slots = new PacketSlots(3, 4); // 0, 3, 6, 9
        flow.capturePackets(slots);
        for (long seq = 0; seq < 20; seq++) {
            if (seq != 6) {
                data(seq, 5_000 + seq);
            }
        }
        FlowReceiver.Summary s = flow.closeStep(20);
        List<Row> rows = rows(slots, null, new FailedRanges(), 20, s, 0, 0);
        assertThat(rows).extracting(Row::seq).containsExactly(0L, 3L, 6L, 9L);
        assertThat(rows).extracting(Row::status).containsExactly(PacketStep.RECEIVED, PacketStep.RECEIVED,
            PacketStep.LOST, PacketStep.RECEIVED);
        assertThat(PacketSlots.slot(12, 3, 4)).isEqualTo(-1);
        assertThat(PacketSlots.slot(4, 3, 4)).isEqualTo(-1);
    }
}
