package io.lossprobe.control;

import io.lossprobe.core.result.ClockOffset;
import java.io.IOException;

/**
 * NTP-style estimate of the server's clock offset over the control channel (RFC 5905 section 8, the on-wire
 * protocol): the client stamps t1 and sends a {@code clock} request; the server stamps t2 on receipt and t3 just
 * before its reply; the client stamps t4 on the reply. t1, t4 are the client's {@code System.nanoTime()}, t2, t3
 * the server's. Of several back-to-back exchanges the one with the smallest delay wins (the minimum filter of
 * RFC 5905 section 10: the least-delayed sample has the least room for asymmetry).
 *
 * <pre>
 *   client  t1 ----request----> t2  server
 *           t4 <----reply------ t3
 *   offset = ((t2 - t1) + (t3 - t4)) / 2      delay = (t4 - t1) - (t3 - t2)
 * </pre>
 *
 * <p>Why the truth lies within offset +- delay/2: let the true offset be T and the one-way times be f (request)
 * and b (reply), both >= 0 because t2 is stamped after the request arrived and t3 before the reply left. Then
 * t2 - t1 = T + f and t3 - t4 = T - b, so delay = f + b and offset = T + (f - b) / 2. Since
 * |f - b| <= f + b, |offset - T| <= delay / 2, with equality when all of the delay is on one side. Nothing in
 * the four stamps tells a symmetric path from an asymmetric one, so no smaller bound is honest. Rounding delay/2
 * down costs at most half a nanosecond, so the bound used is delay/2 rounded up. The clocks' rate difference adds
 * at most that rate times the exchange's duration (5 ns at 100 ppm over 50 us), which is ignored; over a whole
 * step it is not negligible, which is why the caller estimates again after each step and reports the drift.
 *
 * <p>Overflow: {@code nanoTime} origins are arbitrary per host, so a raw stamp may be anywhere in the 64-bit range
 * and the offset is only meaningful modulo 2^64. Every formula here subtracts two stamps of one clock (a small
 * true elapsed time, exact under wrap-around) or a cross-clock difference minus a small value; it never adds two
 * raw stamps or two offsets. offset is computed as (t2 - t1) - delay / 2, which equals the RFC's
 * ((t2 - t1) + (t3 - t4)) / 2 without the sum that could overflow.
 */
final class ClockSync {
    static final int DEFAULT_EXCHANGES = 16;
    /** Bound on one estimate's exchanges, so a caller cannot turn it into a long-running loop. */
    static final int MAX_EXCHANGES = 256;

    private ClockSync() {
    }

    /** The four stamps of one exchange. */
    record Stamps(long t1, long t2, long t3, long t4) {
        /** The round trip less the server's hold time; each difference is on one clock. */
        long delayNs() {
            return (t4 - t1) - (t3 - t2);
        }

        /** ((t2 - t1) + (t3 - t4)) / 2, without adding two cross-clock differences. */
        long offsetNs() {
            return (t2 - t1) - delayNs() / 2;
        }

        /** Half the delay rounded up, so the truncated division in {@link #offsetNs} stays inside it. */
        long uncertaintyNs() {
            long delay = delayNs();
            return delay - delay / 2;
        }
    }

    /** One exchange: sends request {@code seq} and returns its four stamps. */
    interface Exchange {
        Stamps run(int seq) throws IOException;
    }

    /** The server's clock as the exchange reads it; a seam so tests can shift it, wrap it, or skew its stamps. */
    interface ServerClock {
        ServerClock SYSTEM = shifted(0);

        /** t2: read once the request has been read. */
        long receivedNs();

        /** t3: read just before the reply is written. */
        long replyingNs();

        /** {@code System.nanoTime()} plus {@code shiftNs}, wrapping as another host's clock may. */
        static ServerClock shifted(long shiftNs) {
            return new ServerClock() {
                @Override
                public long receivedNs() {
                    return System.nanoTime() + shiftNs;
                }

                @Override
                public long replyingNs() {
                    return System.nanoTime() + shiftNs;
                }
            };
        }
    }

    /** Runs {@code exchanges} exchanges back to back and returns the least-delayed one's estimate. */
    static ClockOffset estimate(int exchanges, Exchange exchange) throws IOException {
        if (exchanges < 1 || exchanges > MAX_EXCHANGES) {
            throw new IllegalArgumentException("exchanges must be in 1.." + MAX_EXCHANGES + ", not " + exchanges);
        }
        Stamps best = null;
        for (int seq = 0; seq < exchanges; seq++) {
            Stamps s = checked(exchange.run(seq));
            if (best == null || s.delayNs() < best.delayNs()) {
                best = s;
            }
        }
        return new ClockOffset(best.offsetNs(), best.uncertaintyNs(), best.t4() - best.t1(), exchanges);
    }

    /**
     * Stamps that break causality (the server held the request longer than the round trip, or for a negative
     * time) come from a broken or lying peer; an estimate from them would carry a meaningless bound.
     */
    static Stamps checked(Stamps s) throws ControlProtocolException {
        long holdNs = s.t3() - s.t2();
        long rttNs = s.t4() - s.t1();
        if (rttNs < 0 || holdNs < 0 || holdNs > rttNs) {
            throw new ControlProtocolException("inconsistent clock stamps: server hold " + holdNs
                + " ns, round trip " + rttNs + " ns");
        }
        return s;
    }
}
