package io.lossprobe.control;

import io.lossprobe.core.result.ClockOffset;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The on-wire math on synthetic stamps: exact answers, the +-delay/2 bound, wrap-around, the minimum filter. */
class ClockSyncTest {
    /**
     * Stamps of an exchange with true offset {@code offsetNs}: the request leaves at t1 (client clock), takes
     * {@code forwardNs}, is held {@code holdNs} and the reply takes {@code backwardNs}. Wrapping like real clocks.
     */
    private static ClockSync.Stamps exchange(long t1, long offsetNs, long forwardNs, long holdNs, long backwardNs) {
        long t2 = t1 + forwardNs + offsetNs;
        long t3 = t2 + holdNs;
        long t4 = t1 + forwardNs + holdNs + backwardNs;
        return new ClockSync.Stamps(t1, t2, t3, t4);
    }

    @Test
    void aSymmetricPathGivesTheExactOffsetAndHalfTheDelayAsBound() {
        ClockSync.Stamps s = exchange(1_000_000, 3_600_000_000_000L, 20_000, 5_000, 20_000);
        assertThat(s.offsetNs()).isEqualTo(3_600_000_000_000L);
        assertThat(s.delayNs()).isEqualTo(40_000);
        assertThat(s.uncertaintyNs()).isEqualTo(20_000);
    }

    @Test
    void anAsymmetricPathBiasesByHalfTheDifferenceAndStaysInsideTheBound() {
        long truth = -7_000_000;
        ClockSync.Stamps s = exchange(123_456_789, truth, 10_000, 3_000, 90_000);
        assertThat(s.offsetNs()).isEqualTo(truth + (10_000 - 90_000) / 2);
        assertThat(Math.abs(s.offsetNs() - truth)).isLessThanOrEqualTo(s.uncertaintyNs());
        // All of the delay on one side: the bound is reached, not exceeded.
        ClockSync.Stamps oneSided = exchange(0, truth, 0, 3_000, 80_000);
        assertThat(Math.abs(oneSided.offsetNs() - truth)).isEqualTo(oneSided.uncertaintyNs());
    }

    @Test
    void stampsThatWrapAroundLongMaxGiveTheSameAnswers() {
        // Server stamps straddle the wrap (t2 just below Long.MAX_VALUE, t3 past it).
        long truth = Long.MAX_VALUE - 10 - 5_000;
        ClockSync.Stamps s = exchange(5_000, truth, 0, 20, 30);
        assertThat(s.t2()).isEqualTo(Long.MAX_VALUE - 10);
        assertThat(s.t3()).isNegative();
        assertThat(s.offsetNs()).isEqualTo(truth - 15);
        assertThat(s.uncertaintyNs()).isEqualTo(15);
        // The largest possible offset, and a client clock that wraps between t1 and t4.
        ClockSync.Stamps far = exchange(Long.MAX_VALUE - 100, Long.MIN_VALUE, 60, 10, 60);
        assertThat(far.t4()).isNegative();
        assertThat(far.offsetNs()).isEqualTo(Long.MIN_VALUE);
        assertThat(far.delayNs()).isEqualTo(120);
    }

    @Test
    void theTruthIsAlwaysWithinTheBoundForAnyOffsetAndPath() {
        Random r = new Random(7);
        for (int i = 0; i < 100_000; i++) {
            long truth = r.nextLong();
            long forward = r.nextInt(1_000_000_000);
            long backward = r.nextInt(1_000_000_000);
            ClockSync.Stamps s = exchange(r.nextLong(), truth, forward, r.nextInt(1_000_000), backward);
            long error = s.offsetNs() - truth; // wrap-safe: the estimate is near the truth modulo 2^64
            assertThat(Math.abs(error)).as("exchange %s", s).isLessThanOrEqualTo(s.uncertaintyNs());
            assertThat(s.uncertaintyNs()).isEqualTo((forward + backward + 1) / 2);
        }
    }

    @Test
    void theLeastDelayedExchangeWins() throws Exception {
        long truth = 42_000_000_000L;
        List<ClockSync.Stamps> script = new ArrayList<>(List.of(
            exchange(0, truth, 500_000, 1_000, 100_000),
            exchange(1_000_000, truth, 10_000, 1_000, 12_000), // the least delayed: 22 us
            exchange(2_000_000, truth, 300_000, 1_000, 11_000)));
        ClockOffset o = ClockSync.estimate(3, seq -> script.get(seq));
        assertThat(o.offsetNs()).isEqualTo(truth - 1_000);
        assertThat(o.uncertaintyNs()).isEqualTo(11_000);
        assertThat(o.rttNs()).isEqualTo(23_000);
        assertThat(o.exchanges()).isEqualTo(3);
    }

    @Test
    void stampsThatBreakCausalityAreRefused() {
        // A server that claims to have held the request longer than the whole round trip.
        ClockSync.Stamps held = new ClockSync.Stamps(0, 100, 10_000, 5_000);
        assertThatThrownBy(() -> ClockSync.estimate(1, seq -> held)).hasMessageContaining("inconsistent");
        ClockSync.Stamps backwards = new ClockSync.Stamps(0, 100, 50, 5_000);
        assertThatThrownBy(() -> ClockSync.estimate(1, seq -> backwards)).hasMessageContaining("inconsistent");
    }

    @Test
    void theNumberOfExchangesIsBounded() {
        ClockSync.Stamps ok = exchange(0, 0, 1, 1, 1);
        assertThatThrownBy(() -> ClockSync.estimate(0, seq -> ok)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ClockSync.estimate(ClockSync.MAX_EXCHANGES + 1, seq -> ok))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void oneWayDelaysAndDriftUseTheOffsetWrapSafely() {
        ClockOffset o = new ClockOffset(Long.MIN_VALUE + 3, 10, 20, 16);
        long sentClient = Long.MAX_VALUE - 1_000;
        long arrivedServer = sentClient + 25_000 + o.offsetNs(); // wraps
        assertThat(o.clientToServerNs(sentClient, arrivedServer)).isEqualTo(25_000);
        long sentServer = arrivedServer;
        long arrivedClient = sentServer - o.offsetNs() + 31_000;
        assertThat(o.serverToClientNs(sentServer, arrivedClient)).isEqualTo(31_000);
        ClockOffset later = new ClockOffset(Long.MIN_VALUE + 3 - 7_000, 10, 20, 16);
        assertThat(later.driftSinceNs(o)).isEqualTo(-7_000);
    }
}
