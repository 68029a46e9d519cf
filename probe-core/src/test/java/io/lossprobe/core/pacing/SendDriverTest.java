package io.lossprobe.core.pacing;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SendPacing;
import org.junit.jupiter.api.Test;

/** When the one send driver starts the next cycle, for each pacing a transport asks for, on an injected clock. */
class SendDriverTest {
    private static final io.lossprobe.core.wire.MessageAuth KEY = new io.lossprobe.core.wire.MessageAuth(3, 4);
    private static final long US = 1_000L;

    private static final class Writer implements MessageWriter {
        boolean blocked;

        @Override
        public int write(long word0, long word1, long sequence, long sendTimeNs, long actualNs, long tag) {
            return blocked ? BLOCKED : ACCEPTED;
        }

        @Override
        public void flush() {
        }
    }

    private static SendLoop loop(Writer w, long rate) {
        SendLoop loop = new SendLoop(new MessageWriter[] {w}, 1, 0, 64, new long[] {rate}, 0, 1_000_000_000L, 64,
            SendFilter.NONE, null, KEY);
        loop.start(0);
        return loop;
    }

    @Test
    void aCycleWaitsForTheNextDueMessage() {
        SendLoop loop = loop(new Writer(), 1000); // one message per ms
        int sent = loop.doWork(0);
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 0, 10 * US, SendPacing.DEFAULT)).isEqualTo(1_000 * US);
    }

    @Test
    void theMinimumCycleBatchesMessagesThatFallDueSooner() {
        SendLoop loop = loop(new Writer(), 100_000); // one message every 10 us
        int sent = loop.doWork(0);
        SendPacing udp = SendPacing.DEFAULT.withMinCycleNs(50 * US);
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 0, 2 * US, udp)).isEqualTo(50 * US);
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 0, 2 * US, SendPacing.DEFAULT)).isEqualTo(10 * US);
    }

    @Test
    void aFullCycleIsBehindAndIsFollowedAtOnceWhateverTheMinimumCycle() {
        SendLoop loop = loop(new Writer(), 10_000_000);
        int sent = loop.doWork(100 * US); // 1,000 due, 64 taken
        assertThat(sent).isEqualTo(64);
        SendPacing udp = SendPacing.DEFAULT.withMinCycleNs(50 * US);
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 100 * US, 101 * US, udp)).isEqualTo(101 * US);
    }

    @Test
    void everyDueFlowBlockedBacksOffInsteadOfSpinning() {
        Writer w = new Writer();
        w.blocked = true;
        SendLoop loop = loop(w, 1_000_000);
        int sent = loop.doWork(100 * US);
        assertThat(sent).isZero();
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 100 * US, 101 * US, SendPacing.DEFAULT))
            .isEqualTo(101 * US + SendPacing.DEFAULT.blockedBackoffNs());
    }

    /** Records, per message, its intended and its actual send time. */
    private static final class TimingWriter implements MessageWriter {
        final java.util.List<long[]> times = new java.util.ArrayList<>();
        int flushes;

        @Override
        public int write(long word0, long word1, long sequence, long sendTimeNs, long actualNs, long tag) {
            if (io.lossprobe.core.wire.MessageHeader.kind(word0) == io.lossprobe.core.wire.MessageHeader.KIND_DATA) {
                times.add(new long[] {sendTimeNs, actualNs});
            }
            return ACCEPTED;
        }

        @Override
        public void flush() {
            flushes++;
        }
    }

    /** Drives a staggered 4-flow loop at 8,000/s for 50 ms on virtual time with {@code pacing}; returns its writers. */
    private static TimingWriter[] driveOnVirtualTime(SendPacing pacing, SendLoop[] out) throws Exception {
        io.lossprobe.core.testing.VirtualTime time = new io.lossprobe.core.testing.VirtualTime(1_000_000_000L);
        TimingWriter[] w = {new TimingWriter(), new TimingWriter(), new TimingWriter(), new TimingWriter()};
        SendLoop loop = new SendLoop(w, 1, 0, 64, new long[] {2000, 2000, 2000, 2000}, 0, 50_000_000L, 64,
            SendFilter.NONE, null, KEY);
        if (pacing.staggerFlows()) {
            loop.staggerFlows();
        }
        loop.start(time.nanoTime());
        java.util.concurrent.CompletableFuture<Void> done = SendDriver.drive(loop, time.executor(), pacing, time);
        assertThat(time.await(done, 1_000_000_000L)).isTrue();
        done.get();
        out[0] = loop;
        return w;
    }

    @Test
    void precisionPacingSendsEveryMessageAtItsOwnIntendedTimeOnAnExecutorThatDoesNotSleep() throws Exception {
        SendLoop[] loop = new SendLoop[1];
        TimingWriter[] w = driveOnVirtualTime(SendPacing.PRECISION, loop);
        long messages = 0;
        for (TimingWriter f : w) {
            assertThat(f.times).hasSize(100);
            for (long[] t : f.times) {
                assertThat(t[1]).as("actual send time").isEqualTo(t[0]);
            }
            assertThat(f.flushes).as("one message per cycle: one flush each, and the loop's last")
                .isEqualTo(f.times.size() + 1);
            messages += f.times.size();
        }
        assertThat(messages).isEqualTo(400);
        assertThat(loop[0].lag().maxNs()).isZero();
    }

    @Test
    void theDefaultsMinimumCycleBatchesAndMakesMessagesLate() throws Exception {
        SendLoop[] loop = new SendLoop[1];
        TimingWriter[] w = driveOnVirtualTime(SendPacing.DEFAULT.withMinCycleNs(50 * US), loop);
        long late = 0;
        for (TimingWriter f : w) {
            assertThat(f.times).hasSize(100);
            for (long[] t : f.times) {
                assertThat(t[1]).isGreaterThanOrEqualTo(t[0]);
                late += t[1] > t[0] ? 1 : 0;
            }
        }
        // All four flows fall due together (not staggered), and a 50 us minimum cycle never adds to that here:
        // every 500 us the cycle sends the four at their instant. What the minimum cycle costs shows at rates
        // whose messages fall due closer than it.
        assertThat(late).isZero();
        assertThat(w[0].flushes).isEqualTo(101);

        TimingWriter[] fast = driveFast(SendPacing.DEFAULT.withMinCycleNs(50 * US), loop);
        assertThat(loop[0].lag().maxNs()).as("batched: up to a minimum cycle late").isGreaterThan(0)
            .isLessThanOrEqualTo(50 * US);
        TimingWriter[] precise = driveFast(SendPacing.PRECISION, loop);
        assertThat(loop[0].lag().maxNs()).isZero();
        assertThat(precise[0].flushes).isGreaterThan(fast[0].flushes);
    }

    /** One flow at 100,000/s (a message every 10 us) for 5 ms on virtual time. */
    private static TimingWriter[] driveFast(SendPacing pacing, SendLoop[] out) throws Exception {
        io.lossprobe.core.testing.VirtualTime time = new io.lossprobe.core.testing.VirtualTime(1_000_000_000L);
        TimingWriter[] w = {new TimingWriter()};
        SendLoop loop = new SendLoop(w, 1, 0, 64, new long[] {100_000}, 0, 5_000_000L, 64, SendFilter.NONE, null,
            KEY);
        loop.start(time.nanoTime());
        java.util.concurrent.CompletableFuture<Void> done = SendDriver.drive(loop, time.executor(), pacing, time);
        assertThat(time.await(done, 1_000_000_000L)).isTrue();
        done.get();
        out[0] = loop;
        assertThat(w[0].times).hasSize(500);
        return w;
    }
}
