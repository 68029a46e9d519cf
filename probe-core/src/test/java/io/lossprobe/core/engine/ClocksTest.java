package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.ClockOffset;
import org.junit.jupiter.api.Test;

/**
 * Both ends on other hosts ({@code run --from A --target B}): B's clock minus A's is (B - here) - (A - here), its
 * bound the sum of the two estimates' bounds, whatever the clocks' origins (the offsets wrap).
 */
class ClocksTest {
    @Test
    void twoOffsetsFromHereComposeIntoTheReceiversMinusTheSenders() {
        ClockOffset b = new ClockOffset(5_000_000, 30_000, 70_000, 16);
        ClockOffset a = new ClockOffset(-2_000_000, 12_000, 40_000, 12);
        ClockOffset between = Clocks.between(b, a);
        assertThat(between.offsetNs()).isEqualTo(7_000_000);
        assertThat(between.uncertaintyNs()).isEqualTo(42_000);
        assertThat(between.rttNs()).isEqualTo(70_000);
        assertThat(between.exchanges()).isEqualTo(12);
        // A message A stamped at 1,000,000 on its clock arrives at B 250 us later: B reads it at
        // 1,000,000 + 250,000 + 7,000,000 on its own clock, and the corrected delay is the true one.
        long sentA = 1_000_000;
        long arrivedB = sentA + 250_000 + between.offsetNs();
        assertThat((arrivedB - sentA) - between.offsetNs()).isEqualTo(250_000);
    }

    @Test
    void originsFarApartWrapAndStillCompose() {
        ClockOffset b = new ClockOffset(Long.MAX_VALUE - 10, 1, 1, 1);
        ClockOffset a = new ClockOffset(Long.MIN_VALUE + 10, 1, 1, 1);
        assertThat(Clocks.between(b, a).offsetNs()).isEqualTo(-21);
    }
}
