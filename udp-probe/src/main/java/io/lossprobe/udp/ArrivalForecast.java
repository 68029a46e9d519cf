package io.lossprobe.udp;

/**
 * When an echo responder's next request should arrive, so that its thread is awake for it rather than woken by it:
 * the gap between the last two requests it answered, repeated. A thread asleep in epoll_wait is woken by the
 * request's arrival, and on a small virtual machine that wake-up is most of a round trip (measured on this project's
 * 2-core VM at 1k/s: 10-15 us from the request's arrival until the responder ran, against 3-4 us for the request's
 * whole way through the kernel), so it would be the instrument's share of every round trip, not the path's.
 *
 * <p>With a forecast the reader sleeps in a timed wait, which a datagram still ends, until {@code earlyNs} before
 * the request is due, then looks without waiting until {@code earlyNs} after it, and then waits for it as before.
 * That is at most {@code 2 x earlyNs} of looking per request, and only while requests come at least
 * {@link #MIN_GAP_FACTOR}{@code  x earlyNs} apart: at most an eighth of the thread's time, whoever sends (only
 * answered requests, which passed their tag, move the forecast). Faster requests find the thread awake anyway; no
 * forecast (the first request, a gap over {@link #MAX_GAP_NS}, a request that did not come when due, Poisson
 * arrivals that missed their window) means the wait of before.
 */
final class ArrivalForecast {
    /** {@link #waitNs}: no forecast, wait until a datagram comes. */
    static final long UNTIL_ARRIVAL = -1;
    /** The shortest gap forecast, in units of the early wake-up: 2 x early of looking is then an eighth of it. */
    static final int MIN_GAP_FACTOR = 16;
    /** The longest gap forecast: a longer one is no schedule worth waking early for. */
    static final long MAX_GAP_NS = 100_000_000L;

    private final long earlyNs;
    private final long minGapNs;
    private boolean answeredAny;
    private long lastNs;
    private long expectedNs;
    private boolean forecast;

    /** @param earlyNs how long before a request is due the thread wakes, and how long after it it still looks */
    ArrivalForecast(long earlyNs) {
        if (earlyNs <= 0) {
            throw new IllegalArgumentException("early wake-up " + earlyNs + " ns");
        }
        this.earlyNs = earlyNs;
        this.minGapNs = MIN_GAP_FACTOR * earlyNs;
    }

    /**
     * A request answered that arrived at {@code arrivalNs} (its kernel stamp, on {@link System#nanoTime}'s clock);
     * true when it leaves a forecast of the next.
     */
    boolean answered(long arrivalNs) {
        if (answeredAny) {
            long gap = arrivalNs - lastNs;
            forecast = gap >= minGapNs && gap <= MAX_GAP_NS;
            expectedNs = arrivalNs + gap;
        }
        answeredAny = true;
        lastNs = arrivalNs;
        return forecast;
    }

    /**
     * How long the reader may wait at {@code nowNs}: {@link #UNTIL_ARRIVAL} without a forecast; a positive time to
     * sleep (a datagram still ends the wait) until {@code earlyNs} before the request is due; 0 to look without
     * waiting, from then until {@code earlyNs} after it. Past that the request did not come when due: no forecast
     * until the next one is answered.
     */
    long waitNs(long nowNs) {
        if (!forecast) {
            return UNTIL_ARRIVAL;
        }
        long wakeAt = expectedNs - earlyNs;
        if (nowNs < wakeAt) {
            return wakeAt - nowNs;
        }
        if (nowNs < expectedNs + earlyNs) {
            return 0;
        }
        forecast = false;
        return UNTIL_ARRIVAL;
    }
}
