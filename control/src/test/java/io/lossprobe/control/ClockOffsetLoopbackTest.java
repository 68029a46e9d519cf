package io.lossprobe.control;

import io.lossprobe.core.result.ClockOffset;
import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A real server on loopback whose clock is shifted by a known amount (the same process, so the truth is known):
 * every estimate must contain the shift within its own uncertainty, including across 64-bit wrap-around and with
 * a known path asymmetry.
 */
@Timeout(60)
class ClockOffsetLoopbackTest {
    private static final Auth AUTH = Auth.ofSecret("a shared secret for clock tests");
    private static final ServerLimits LIMITS = ControlTesting.LIMITS;
    private ControlServer server;
    private ControlClient client;

    @BeforeEach
    void start() throws IOException {
        server = new ControlServer("127.0.0.1", 0, AUTH, LIMITS,
            ControlTesting.only(new ControlTesting.NoTransport()), null);
        client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000);
        client.negotiate(new Plan(List.of("udp"), 1, 21500, List.of(Level.parse("1k")), 1_000_000_000L, 0, 0, 64,
            "127.0.0.1"), 1, Map.of());
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
    }

    /** The estimate's error against the known shift, wrap-safe; it must lie within the estimate's uncertainty. */
    private static void assertContains(ClockOffset o, long shiftNs) {
        long errorNs = o.offsetNs() - shiftNs;
        assertThat(Math.abs(errorNs)).as("error of %s against shift %d", o, shiftNs)
            .isLessThanOrEqualTo(o.uncertaintyNs());
        assertThat(o.uncertaintyNs()).as("half the delay").isLessThanOrEqualTo(o.rttNs() / 2 + 1);
    }

    @Test
    void withTheSameClockTheOffsetIsWithinItsUncertaintyOfZero() throws IOException {
        for (int i = 0; i < 20; i++) {
            ClockOffset o = client.clockOffset();
            assertContains(o, 0);
            assertThat(o.exchanges()).isEqualTo(ClockSync.DEFAULT_EXCHANGES);
        }
    }

    @Test
    void aServerClockAnHourAheadOrBehindIsFound() throws IOException {
        for (long shiftNs : new long[] {TimeUnit.HOURS.toNanos(1), -TimeUnit.HOURS.toNanos(1)}) {
            server.useClock(ClockSync.ServerClock.shifted(shiftNs));
            for (int i = 0; i < 10; i++) {
                assertContains(client.clockOffset(ClockSync.DEFAULT_EXCHANGES), shiftNs);
            }
        }
    }

    @Test
    void theLargestOffsetsAreFound() throws IOException {
        for (long shiftNs : new long[] {Long.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE + 1}) {
            server.useClock(ClockSync.ServerClock.shifted(shiftNs));
            assertContains(client.clockOffset(ClockSync.DEFAULT_EXCHANGES), shiftNs);
        }
    }

    /** A server clock that passes Long.MAX_VALUE a moment from now and records on which sides it stamped. */
    private static final class WrappingClock implements ClockSync.ServerClock {
        final long shiftNs;
        final AtomicBoolean sawPositive = new AtomicBoolean();
        final AtomicBoolean sawNegative = new AtomicBoolean();

        WrappingClock(long wrapsInNs) {
            shiftNs = Long.MAX_VALUE - System.nanoTime() - wrapsInNs;
        }

        private long stamp() {
            long ns = System.nanoTime() + shiftNs;
            (ns < 0 ? sawNegative : sawPositive).set(true);
            return ns;
        }

        @Override
        public long receivedNs() {
            return stamp();
        }

        @Override
        public long replyingNs() {
            return stamp();
        }
    }

    @Test
    void aServerClockThatWrapsDuringTheEstimateIsFound() throws IOException {
        WrappingClock clock = new WrappingClock(TimeUnit.MILLISECONDS.toNanos(2));
        server.useClock(clock);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            assertThat(System.nanoTime()).as("an estimate spanning the wrap in time").isLessThan(deadline);
            clock.sawPositive.set(false);
            clock.sawNegative.set(false);
            assertContains(client.clockOffset(ClockSync.MAX_EXCHANGES), clock.shiftNs);
            if (clock.sawPositive.get() && clock.sawNegative.get()) {
                return;
            }
            if (clock.sawNegative.get()) { // wrapped before this estimate began: move the wrap just ahead again
                clock = new WrappingClock(TimeUnit.MILLISECONDS.toNanos(2));
                server.useClock(clock);
            }
        }
    }

    /**
     * The server holds each reply a known time after stamping t3: a reply path that much slower than the request
     * path, the asymmetry the four stamps cannot see. (Stamps alone cannot fake it honestly: t2 stamped before the
     * request arrived, or t3 after the reply left, break the precondition the bound rests on.) The estimate is
     * biased by half of it, and the bound still contains the truth because the asymmetry is inside the delay.
     */
    @Test
    void aKnownAsymmetryBiasesByHalfOfItAndStaysWithinTheBound() throws IOException {
        long shiftNs = TimeUnit.MINUTES.toNanos(10);
        long asymmetryNs = TimeUnit.MILLISECONDS.toNanos(1);
        server.useClock(new ClockSync.ServerClock() {
            @Override
            public long receivedNs() {
                return System.nanoTime() + shiftNs;
            }

            @Override
            public long replyingNs() {
                long stampedNs = System.nanoTime();
                while (System.nanoTime() - stampedNs < asymmetryNs) { // the slow return path: parks, bounded
                    LockSupport.parkNanos(asymmetryNs);
                }
                return stampedNs + shiftNs;
            }
        });
        for (int i = 0; i < 5; i++) {
            ClockOffset o = client.clockOffset(ClockSync.DEFAULT_EXCHANGES);
            assertContains(o, shiftNs);
            assertThat(o.uncertaintyNs()).isGreaterThanOrEqualTo(asymmetryNs / 2);
            assertThat(o.offsetNs() - shiftNs).as("biased towards the slow side").isNegative();
            // What remains after removing the known bias is loopback's own asymmetry, within loopback's own bound.
            long loopbackBoundNs = o.uncertaintyNs() - asymmetryNs / 2;
            assertThat(Math.abs(o.offsetNs() - shiftNs + asymmetryNs / 2)).as("%s", o)
                .isLessThanOrEqualTo(loopbackBoundNs + 1);
        }
    }
}
