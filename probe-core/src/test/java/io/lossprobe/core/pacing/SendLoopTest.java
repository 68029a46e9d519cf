package io.lossprobe.core.pacing;

import io.lossprobe.core.accounting.SendFilter;
import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.wire.MessageHeader;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The send loop driven with an injected clock and writers that record, refuse or block. */
class SendLoopTest {
    static final io.lossprobe.core.wire.MessageAuth KEY = new io.lossprobe.core.wire.MessageAuth(3, 4);
    private static final long MS = 1_000_000L;

    static final class RecordingWriter implements MessageWriter {
        final List<long[]> written = new ArrayList<>();
        int flushes;
        int calls;
        boolean blocked;
        long refuseFrom = Long.MAX_VALUE;
        /** Refuses the calls with these indices (0-based over every write call), whatever their sequence. */
        java.util.function.IntPredicate refuseCall = call -> false;

        @Override
        public int write(long word0, long word1, long sequence, long sendTimeNs, long actualNs, long tag) {
            if (blocked) {
                return BLOCKED;
            }
            int call = calls++;
            if (sequence >= refuseFrom || refuseCall.test(call)) {
                return REFUSED;
            }
            written.add(new long[] {word0, word1, sequence, sendTimeNs});
            return ACCEPTED;
        }

        @Override
        public void flush() {
            flushes++;
        }
    }

    private static SendLoop loop(RecordingWriter[] w, long[] rates, long warmupMs, long windowMs) {
        return new SendLoop(w, 7, 3, 64, rates, warmupMs * MS, windowMs * MS, 64, SendFilter.NONE, null, KEY);
    }

    private static void runToEnd(SendLoop loop, long fromMs, long toMs) {
        for (long t = fromMs * MS; t <= toMs * MS && !loop.isDone(); t += MS) {
            loop.doWork(t);
        }
    }

    @Test
    void sendsExactlyTheScheduleWithIntendedTimestampsAndOneFlushPerBatch() {
        RecordingWriter w = new RecordingWriter();
        SendLoop loop = loop(new RecordingWriter[] {w}, new long[] {1000}, 0, 100);
        loop.start(0);
        for (long t = 0; t <= 100 * MS && !loop.isDone(); t += MS / 2) {
            loop.doWork(t);
        }
        assertThat(loop.isDone()).isTrue();
        assertThat(w.written).hasSize(100);
        for (int k = 0; k < 100; k++) {
            long[] m = w.written.get(k);
            assertThat(m[2]).isEqualTo(k);
            assertThat(m[3]).isEqualTo(k * MS);
            assertThat(MessageHeader.kind(m[0])).isEqualTo(MessageHeader.KIND_DATA);
            assertThat(MessageHeader.step(m[1])).isEqualTo(3);
            assertThat(MessageHeader.runId(m[1])).isEqualTo(7);
        }
        assertThat(loop.counts(0)).isEqualTo(new FlowSendCounts(100, 100, 0, 0));
    }

    @Test
    void aLateWakeUpSendsEverythingDueInOneBatch() {
        RecordingWriter w = new RecordingWriter();
        SendLoop loop = loop(new RecordingWriter[] {w}, new long[] {10_000}, 0, 1000);
        loop.start(0);
        loop.doWork(0);
        loop.doWork(5 * MS); // 50 due since the first
        assertThat(w.written).hasSize(51);
        assertThat(w.flushes).isEqualTo(2);
        // Lag per message against its own intended time: 0 for the first, then 4.9 ms (message 1, due at 0.1 ms)
        // down to 0 (message 50, due at 5 ms) for the batch. Recorded once per batch it would be one value.
        assertThat(loop.lag().count()).isEqualTo(51);
        assertThat(loop.lag().maxNs()).isBetween(4_850_000L, 4_950_000L);
        assertThat(loop.lag().p50Ns()).isBetween(2_300_000L, 2_600_000L);
    }

    @Test
    void warmUpMessagesAreMarkedAndNotCounted() {
        RecordingWriter w = new RecordingWriter();
        SendLoop loop = loop(new RecordingWriter[] {w}, new long[] {1000}, 10, 10);
        loop.start(0);
        for (long t = 0; t <= 30 * MS && !loop.isDone(); t += MS) {
            loop.doWork(t);
        }
        long warm = w.written.stream().filter(m -> MessageHeader.kind(m[0]) == MessageHeader.KIND_WARMUP).count();
        long data = w.written.stream().filter(m -> MessageHeader.kind(m[0]) == MessageHeader.KIND_DATA).count();
        assertThat(warm).isEqualTo(10);
        assertThat(data).isEqualTo(10);
        assertThat(loop.counts(0).sent()).isEqualTo(10);
        assertThat(w.written.stream().filter(m -> MessageHeader.kind(m[0]) == MessageHeader.KIND_DATA)
            .mapToLong(m -> m[2]).min().getAsLong()).isZero();
    }

    @Test
    void blockedFlowsFallBehindAndRefusedOnesFail() {
        RecordingWriter ok = new RecordingWriter();
        RecordingWriter blocked = new RecordingWriter();
        RecordingWriter refusing = new RecordingWriter();
        blocked.blocked = true;
        refusing.refuseFrom = 30;
        SendLoop loop = loop(new RecordingWriter[] {ok, blocked, refusing}, new long[] {1000, 1000, 1000}, 0, 100);
        loop.start(0);
        for (long t = 0; t <= 50 * MS; t += MS) {
            loop.doWork(t);
        }
        blocked.blocked = false; // unblocks halfway: it catches up with what is due
        for (long t = 51 * MS; t <= 101 * MS && !loop.isDone(); t += MS) {
            loop.doWork(t);
        }
        assertThat(loop.counts(0)).isEqualTo(new FlowSendCounts(100, 100, 0, 0));
        assertThat(loop.counts(1)).isEqualTo(new FlowSendCounts(100, 100, 0, 0));
        assertThat(loop.counts(2)).isEqualTo(new FlowSendCounts(100, 30, 70, 0));

        RecordingWriter stuck = new RecordingWriter();
        stuck.blocked = true;
        SendLoop stuckLoop = loop(new RecordingWriter[] {stuck}, new long[] {1000}, 0, 100);
        stuckLoop.start(0);
        for (long t = 0; t <= 100 * MS && !stuckLoop.isDone(); t += MS) {
            stuckLoop.doWork(t);
        }
        assertThat(stuckLoop.isDone()).isTrue();
        assertThat(stuckLoop.counts(0)).isEqualTo(new FlowSendCounts(100, 0, 0, 100));
    }

    @Test
    void aRefusalMidWindowTakesNoWireSequenceSoTheSequencesStayDense() {
        RecordingWriter w = new RecordingWriter();
        w.refuseCall = call -> call >= 40 && call < 50; // ten refusals in the middle of the window
        SendLoop loop = loop(new RecordingWriter[] {w}, new long[] {1000}, 0, 100);
        loop.start(0);
        runToEnd(loop, 0, 101);
        assertThat(loop.counts(0)).isEqualTo(new FlowSendCounts(100, 90, 10, 0));
        assertThat(w.written.stream().mapToLong(m -> m[2])).containsExactlyElementsOf(
            java.util.stream.LongStream.range(0, 90).boxed().toList());
        // The schedule moved on: the message after the refusals keeps its own intended time (50 ms), not 40 ms.
        assertThat(w.written.get(40)[3]).isEqualTo(50 * MS);
    }

    @Test
    void failuresReportedAfterAcceptMoveFromSentToSendFailedAndKeepTheirSequences() {
        RecordingWriter w = new RecordingWriter();
        io.lossprobe.core.accounting.FailedRanges failed = new io.lossprobe.core.accounting.FailedRanges();
        SendLoop loop = new SendLoop(new RecordingWriter[] {w}, 7, 3, 64, new long[] {1000}, 0, 10 * MS, 64,
            SendFilter.NONE, new io.lossprobe.core.accounting.FailedRanges[] {failed}, KEY);
        loop.start(0);
        runToEnd(loop, 0, 10);
        failed.add(4, 3); // the transport learned that 4, 5 and 6 never left
        assertThat(loop.counts(0)).isEqualTo(new FlowSendCounts(10, 7, 3, 0));
        assertThat(loop.failures(0)).isSameAs(failed);
        assertThat(w.written).hasSize(10); // the wire sequences 0..9 were all used: the receiver skips 4..6
    }

    @Test
    void theSendFilterCountsAsSentAndTakesASequenceButNeverWrites() {
        RecordingWriter w = new RecordingWriter();
        SendLoop loop = new SendLoop(new RecordingWriter[] {w}, 1, 0, 64, new long[] {1000}, 0, 20 * MS, 64,
            (flow, seq) -> seq % 5 == 0, null, KEY);
        loop.start(0);
        runToEnd(loop, 0, 20);
        assertThat(loop.counts(0).sent()).isEqualTo(20);
        assertThat(w.written).hasSize(16);
        assertThat(w.written.stream().mapToLong(m -> m[2]).filter(seq -> seq % 5 == 0)).isEmpty();
    }

    @Test
    void theWindowStartIsPublishedNotRunOnTheSendingThread() {
        RecordingWriter w = new RecordingWriter();
        SendLoop loop = loop(new RecordingWriter[] {w}, new long[] {1000}, 10, 10);
        assertThat(loop.start(0)).as("the window begins after the warm-up").isEqualTo(10 * MS);
        loop.doWork(5 * MS);
        assertThat(loop.windowStarted()).isFalse();
        assertThat(loop.sentProgress()).isZero();
        loop.doWork(10 * MS);
        assertThat(loop.windowStarted()).isTrue();
        assertThat(loop.sentProgress()).isEqualTo(1);
    }

    @Test
    void maxLevelSendsWhateverIsAcceptedAndIsNeverBehind() {
        RecordingWriter w = new RecordingWriter();
        SendLoop loop = loop(new RecordingWriter[] {w}, new long[] {0}, 0, 10);
        loop.start(0);
        loop.doWork(0);
        loop.doWork(MS);
        loop.doWork(11 * MS);
        assertThat(loop.isDone()).isTrue();
        assertThat(loop.counts(0).sent()).isEqualTo(w.written.size()).isEqualTo(3 * 64);
        assertThat(loop.counts(0).behind()).isZero();
        assertThat(loop.counts(0).scheduled()).isEqualTo(loop.counts(0).sent());
    }

    @Test
    void flowsShareTheLoopFairlyWhenBehind() {
        RecordingWriter a = new RecordingWriter();
        RecordingWriter b = new RecordingWriter();
        SendLoop loop = loop(new RecordingWriter[] {a, b}, new long[] {1_000_000, 1_000_000}, 0, 1000);
        loop.start(0);
        loop.doWork(500 * MS);
        assertThat(a.written).hasSize(64);
        assertThat(b.written).hasSize(64);
    }

    @Test
    void staggeredFlowsFallDueOneAtATimeEvenlyWithTheSameCounts() {
        RecordingWriter[] w = {new RecordingWriter(), new RecordingWriter(), new RecordingWriter(),
            new RecordingWriter()};
        SendLoop loop = loop(w, new long[] {1000, 1000, 1000, 1000}, 0, 100);
        loop.staggerFlows();
        loop.start(0);
        // 4,000/s over all flows: flow i's message k is due at k ms + i * 250 us.
        List<Long> sendTimes = new ArrayList<>();
        for (long t = 0; t <= 100 * MS && !loop.isDone(); t += MS / 4) {
            int sent = loop.doWork(t);
            assertThat(sent).as("at %d ns", t).isLessThanOrEqualTo(1);
        }
        for (int f = 0; f < w.length; f++) {
            assertThat(w[f].written).as("flow %d", f).hasSize(100);
            assertThat(loop.counts(f).scheduled()).isEqualTo(100);
            for (int k = 0; k < 100; k++) {
                sendTimes.add(w[f].written.get(k)[3]);
                assertThat(w[f].written.get(k)[3]).isEqualTo(k * MS + f * MS / 4);
            }
        }
        assertThat(sendTimes).doesNotHaveDuplicates();
        assertThat(loop.lag().maxNs()).as("driven at every due instant, nothing is late").isZero();
    }

    @Test
    void staggeringLeavesMaxAndUnevenRatesInsideTheirPhase() {
        RecordingWriter[] w = {new RecordingWriter(), new RecordingWriter(), new RecordingWriter()};
        SendLoop loop = loop(w, new long[] {2, 1, 1}, 0, 1000); // offsets of 250 ms and 500 ms, under 1 s
        loop.staggerFlows();
        loop.start(0);
        runToEnd(loop, 0, 1001);
        assertThat(w[0].written).hasSize(2);
        assertThat(w[1].written).hasSize(1);
        assertThat(w[1].written.get(0)[3]).isEqualTo(250 * MS);
        assertThat(w[2].written.get(0)[3]).isEqualTo(500 * MS);

        RecordingWriter unlimited = new RecordingWriter();
        SendLoop max = loop(new RecordingWriter[] {unlimited}, new long[] {0}, 0, 1);
        max.staggerFlows(); // nothing to stagger at "max"
        max.start(0);
        max.doWork(0);
        assertThat(unlimited.written).hasSize(64);
    }

    @Test
    void aBurstPatternHandsEachGroupOverAtOnceWithItsGroupsIntendedTime() {
        RecordingWriter w = new RecordingWriter();
        SendLoop loop = loop(new RecordingWriter[] {w}, new long[] {6_400}, 0, 100);
        loop.pattern(io.lossprobe.core.plan.SendPattern.parse("burst:64"), 0);
        loop.start(0);
        assertThat(loop.doWork(0)).isEqualTo(64);
        assertThat(loop.doWork(10 * MS - 1)).isZero();
        assertThat(loop.nextDueNs(10 * MS - 1)).isEqualTo(10 * MS);
        assertThat(loop.doWork(10 * MS)).isEqualTo(64);
        runToEnd(loop, 11, 200);
        assertThat(w.written).hasSize(640);
        for (int k = 0; k < 640; k++) {
            assertThat(w.written.get(k)[2]).isEqualTo(k);
            assertThat(w.written.get(k)[3]).as("message %d", k).isEqualTo((k / 64) * 10 * MS);
        }
        assertThat(loop.counts(0)).isEqualTo(new FlowSendCounts(640, 640, 0, 0));
        // Lag is measured from each message's own intended time: the burst handed over when due is not late.
        assertThat(loop.lag().maxNs()).isZero();
        // The bursts as they left: ten hand-offs of 64.
        assertThat(loop.handOffs()).isEqualTo(10);
        assertThat(loop.handOffMessages()).isEqualTo(640);
        assertThat(loop.largestHandOff()).isEqualTo(64);
    }

    /** A constant schedule at a rate the loop keeps up with hands each message over on its own. */
    @Test
    void aConstantScheduleHandsOverOneMessageAtATime() {
        RecordingWriter w = new RecordingWriter();
        SendLoop loop = loop(new RecordingWriter[] {w}, new long[] {1_000}, 0, 100);
        loop.start(0);
        runToEnd(loop, 0, 200);
        assertThat(loop.counts(0).sent()).isEqualTo(100);
        assertThat(loop.handOffs()).isEqualTo(100);
        assertThat(loop.largestHandOff()).isEqualTo(1);
    }
}
