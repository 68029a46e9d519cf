package io.lossprobe.core.pacing;

import io.lossprobe.core.accounting.SendFilter;
import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SendPacing;
import org.junit.jupiter.api.Test;

/** When the one send driver starts the next cycle, for each pacing a transport asks for, on an injected clock. */
class SendDriverTest {
    private static final io.lossprobe.core.wire.MessageAuth KEY = new io.lossprobe.core.wire.MessageAuth(3, 4);
    private static final long CLOCK_READ_NS = 200;
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
    void belowTwoMessagesACycleTheMinimumCycleIsDroppedAndHoldsNothing() {
        SendPacing udp = SendPacing.DEFAULT.withMinCycleNs(50 * US);
        SendLoop loop = loop(new Writer(), 30_000); // one message every 33.3 us: 1.5 in a 50 us cycle
        int sent = loop.doWork(0);
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 0, 2 * US, udp)).as("held for the cycle")
            .isEqualTo(50 * US);
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 0, 2 * US, udp.atRate(30_000))).as("due: sent")
            .isEqualTo(33_333);
        assertThat(udp.atRate(40_000)).as("two a cycle: batched").isEqualTo(udp);
        assertThat(udp.atRate(39_999).minCycleNs()).isZero();
        assertThat(SendPacing.PRECISION.atRate(30_000)).isEqualTo(SendPacing.PRECISION);
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
        java.util.concurrent.CompletableFuture<Void> done = SendDriver.drive(loop, time.executor(), pacing,
            costlyClock(time));
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
                assertThat(t[1] - t[0]).as("actual send time: within a spin turn (two clock reads)")
                    .isBetween(0L, 2 * CLOCK_READ_NS);
            }
            assertThat(f.flushes).as("one message per cycle: one flush each, and the loop's last")
                .isEqualTo(f.times.size() + 1);
            messages += f.times.size();
        }
        assertThat(messages).isEqualTo(400);
        assertThat(loop[0].lag().maxNs()).isLessThanOrEqualTo(2 * CLOCK_READ_NS);
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
                late += t[1] - t[0] > US ? 1 : 0; // the cycle's clock reads (200 ns each) aside
            }
        }
        // All four flows fall due together (not staggered), and a 50 us minimum cycle never adds to that here:
        // every 500 us the cycle sends the four at their instant. What the minimum cycle costs shows at rates
        // whose messages fall due closer than it.
        assertThat(late).isZero();
        assertThat(w[0].flushes).isEqualTo(101);

        TimingWriter[] fast = driveFast(SendPacing.DEFAULT.withMinCycleNs(50 * US), loop);
        assertThat(loop[0].lag().maxNs()).as("batched: up to a minimum cycle late").isGreaterThan(0)
            .isLessThanOrEqualTo(50 * US + US); // and the cycle's clock reads
        TimingWriter[] precise = driveFast(SendPacing.PRECISION, loop);
        assertThat(loop[0].lag().maxNs()).isLessThanOrEqualTo(2 * CLOCK_READ_NS);
        assertThat(precise[0].flushes).isGreaterThan(fast[0].flushes);
    }

    /** One flow at 100,000/s (a message every 10 us) for 5 ms on virtual time. */
    private static TimingWriter[] driveFast(SendPacing pacing, SendLoop[] out) throws Exception {
        io.lossprobe.core.testing.VirtualTime time = new io.lossprobe.core.testing.VirtualTime(1_000_000_000L);
        TimingWriter[] w = {new TimingWriter()};
        SendLoop loop = new SendLoop(w, 1, 0, 64, new long[] {100_000}, 0, 5_000_000L, 64, SendFilter.NONE, null,
            KEY);
        loop.start(time.nanoTime());
        java.util.concurrent.CompletableFuture<Void> done = SendDriver.drive(loop, time.executor(), pacing,
            costlyClock(time));
        assertThat(time.await(done, 1_000_000_000L)).isTrue();
        done.get();
        out[0] = loop;
        assertThat(w[0].times).hasSize(500);
        return w;
    }

    /** Virtual time where reading the clock inside a task takes 200 ns, so a spin moves time on. */
    private static NanoClock costlyClock(io.lossprobe.core.testing.VirtualTime time) {
        return new NanoClock() {
            @Override
            public long nanoTime() {
                if (time.inTask()) {
                    time.spend(CLOCK_READ_NS);
                }
                return time.nanoTime();
            }

            @Override
            public boolean await(java.util.concurrent.Future<?> future, long timeoutNs) throws InterruptedException {
                return time.await(future, timeoutNs);
            }
        };
    }

    /**
     * A timer that fires {@code latencyNs} late (a wake-up's cost) on virtual time, where reading the clock inside a
     * task takes 200 ns, so a spin moves time on. With the early wake-up, the timer's lateness is spent before each
     * message's intended time; without it, every message is as late as the wake-up.
     */
    private static SendLoop driveWithLateTimers(SendPacing pacing, long latencyNs) throws Exception {
        io.lossprobe.core.testing.VirtualTime time = new io.lossprobe.core.testing.VirtualTime(1_000_000_000L);
        java.util.concurrent.ScheduledExecutorService inner = time.executor();
        java.util.concurrent.ScheduledExecutorService late = (java.util.concurrent.ScheduledExecutorService)
            java.lang.reflect.Proxy.newProxyInstance(SendDriverTest.class.getClassLoader(),
                new Class<?>[] {java.util.concurrent.ScheduledExecutorService.class}, (proxy, method, args) -> {
                    if (method.getName().equals("schedule") && args[1] instanceof Long delay) {
                        args[1] = delay + latencyNs * ((java.util.concurrent.TimeUnit) args[2]).convert(1,
                            java.util.concurrent.TimeUnit.NANOSECONDS);
                    }
                    return method.invoke(inner, args);
                });
        NanoClock clock = costlyClock(time);
        TimingWriter w = new TimingWriter();
        SendLoop loop = new SendLoop(new MessageWriter[] {w}, 1, 0, 64, new long[] {1000}, 0, 100_000_000L, 64,
            SendFilter.NONE, null, KEY);
        loop.start(time.nanoTime());
        java.util.concurrent.CompletableFuture<Void> done = SendDriver.drive(loop, late, pacing, clock);
        assertThat(clock.await(done, 1_000_000_000L)).isTrue();
        done.get();
        assertThat(w.times).hasSize(100);
        return loop;
    }

    @Test
    void anEarlyWakeUpSpendsTheTimersLatenessBeforeTheIntendedTime() throws Exception {
        long wakeUpNs = 12 * US;
        SendLoop plain = driveWithLateTimers(SendPacing.DEFAULT, wakeUpNs);
        assertThat(plain.lag().p50Ns()).as("woken late, sent late").isGreaterThanOrEqualTo(wakeUpNs);
        SendLoop early = driveWithLateTimers(SendPacing.DEFAULT.withEarlyWakeNs(SendPacing.EARLY_WAKE_NS), wakeUpNs);
        assertThat(early.lag().maxNs()).as("within a spin turn of the intended time").isLessThanOrEqualTo(US);
    }

    @Test
    void precisionPacingSleepsUntilShortlyBeforeEachMessageAndSpendsTheTimersLatenessSpinning() throws Exception {
        // 1k/s: the timer is armed 125 us (an eighth of the wait) ahead of each message; a wake-up that late still
        // leaves the message on time, one later is not hidden.
        SendLoop onTime = driveWithLateTimers(SendPacing.PRECISION, 120 * US);
        assertThat(onTime.lag().maxNs()).as("within a spin turn of the intended time").isLessThanOrEqualTo(US);
        SendLoop late = driveWithLateTimers(SendPacing.PRECISION, 300 * US);
        assertThat(late.lag().p50Ns()).as("a wake-up later than the early wake-up shows as lag")
            .isGreaterThanOrEqualTo(170 * US);
        assertThat(SendPacing.PRECISION.timerNs(1_000 * US)).as("sleeps most of a 1 ms wait").isEqualTo(875 * US);
        assertThat(SendPacing.PRECISION.timerNs(250 * US)).as("short waits are spun whole").isZero();
    }

    @Test
    void aCycleThatBeganJustBeforeAMessageFellDueIsNotBlockedAndDoesNotBackOff() {
        SendLoop loop = loop(new Writer(), 1000);
        loop.doWork(0); // message 0; message 1 is due at 1 ms
        int sent = loop.doWork(1_000 * US - 100); // nothing due yet
        assertThat(sent).isZero();
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 1_000 * US - 100, 1_000 * US + 100, SendPacing.DEFAULT))
            .as("due now, not after a back-off").isEqualTo(1_000 * US + 100);
    }

    @Test
    void theEarlyWakeUpIsAtMostAnEighthOfTheWaitAndNoneBelowTheSpin() {
        SendPacing p = SendPacing.DEFAULT.withEarlyWakeNs(20 * US);
        assertThat(p.timerNs(1_000 * US)).isEqualTo(980 * US);
        assertThat(p.timerNs(80 * US)).isEqualTo(70 * US);
        assertThat(p.timerNs(11 * US)).as("what is left is within the spin: queued at once").isZero();
        assertThat(SendPacing.DEFAULT.timerNs(1_000 * US)).as("no early wake-up").isEqualTo(1_000 * US);
        assertThat(SendPacing.DEFAULT.timerNs(10 * US)).isZero();
    }
}
