package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** An echo responder's forecast of its next request, on virtual time: when it sleeps, looks, and gives up. */
class ArrivalForecastTest {
    private static final long EARLY = 20_000;
    private static final long MS = 1_000_000;

    @Test
    void theFirstRequestForecastsNothing() {
        ArrivalForecast f = new ArrivalForecast(EARLY);
        assertThat(f.waitNs(0)).isEqualTo(ArrivalForecast.UNTIL_ARRIVAL);
        assertThat(f.answered(5 * MS)).isFalse();
        assertThat(f.waitNs(5 * MS + 1)).isEqualTo(ArrivalForecast.UNTIL_ARRIVAL);
    }

    @Test
    void theGapBetweenTheLastTwoIsRepeated() {
        ArrivalForecast f = new ArrivalForecast(EARLY);
        f.answered(10 * MS);
        assertThat(f.answered(11 * MS)).as("a forecast of 12 ms").isTrue();
        // just after the reply: sleep until 20 us before 12 ms
        assertThat(f.waitNs(11 * MS + 5_000)).isEqualTo(MS - EARLY - 5_000);
        // from 20 us before until 20 us after it is due: look without waiting
        assertThat(f.waitNs(12 * MS - EARLY)).isZero();
        assertThat(f.waitNs(12 * MS)).isZero();
        assertThat(f.waitNs(12 * MS + EARLY - 1)).isZero();
        // it came at 12.003 ms: the next is forecast 1.003 ms later
        assertThat(f.answered(12 * MS + 3_000)).isTrue();
        assertThat(f.waitNs(12 * MS + 3_000)).isEqualTo(MS + 3_000 - EARLY);
    }

    @Test
    void aRequestThatDoesNotComeWhenDueEndsTheForecastUntilTheNextIsAnswered() {
        ArrivalForecast f = new ArrivalForecast(EARLY);
        f.answered(0);
        f.answered(MS);
        assertThat(f.waitNs(2 * MS + EARLY)).as("the window has closed").isEqualTo(ArrivalForecast.UNTIL_ARRIVAL);
        assertThat(f.waitNs(2 * MS)).as("and stays closed, even for a clock read before").isEqualTo(
            ArrivalForecast.UNTIL_ARRIVAL);
        assertThat(f.answered(3 * MS)).as("a request lost on the way: the gap doubled, still a forecast").isTrue();
        assertThat(f.waitNs(3 * MS)).isEqualTo(2 * MS - EARLY);
    }

    @Test
    void gapsTooShortOrTooLongAreNotForecast() {
        long shortest = ArrivalForecast.MIN_GAP_FACTOR * EARLY;
        ArrivalForecast f = new ArrivalForecast(EARLY);
        f.answered(0);
        assertThat(f.answered(shortest - 1)).as("looking 2 x early would be more than an eighth").isFalse();
        assertThat(f.answered(2 * shortest - 1)).as("exactly the shortest").isTrue();
        assertThat(f.answered(2 * shortest - 1 + ArrivalForecast.MAX_GAP_NS + 1)).isFalse();
        assertThat(f.answered(2 * shortest - 1 + 2 * ArrivalForecast.MAX_GAP_NS + 1)).as("exactly the longest")
            .isTrue();
        // a burst (two requests read with one stamp) forecasts nothing
        assertThat(f.answered(2 * shortest - 1 + 2 * ArrivalForecast.MAX_GAP_NS + 1)).isFalse();
    }

    @Test
    void lookingIsAtMostAnEighthOfTheGap() {
        ArrivalForecast f = new ArrivalForecast(EARLY);
        long gap = ArrivalForecast.MIN_GAP_FACTOR * EARLY;
        f.answered(0);
        f.answered(gap);
        long looking = 0;
        for (long t = gap; t < 3 * gap; t += 1_000) {
            if (f.waitNs(t) == 0) {
                looking += 1_000;
            }
        }
        assertThat(looking).isEqualTo(2 * EARLY).isLessThanOrEqualTo(gap / 8);
    }

    @Test
    void anEarlyWakeUpIsPositive() {
        assertThatThrownBy(() -> new ArrivalForecast(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
