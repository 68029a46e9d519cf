package io.lossprobe.core.pacing;

import io.lossprobe.core.plan.SendPattern;
import java.math.BigInteger;

/**
 * The pacing schedule of one flow in one phase. Every pattern schedules the constant pattern's count,
 * {@code floor(duration * rate / 1e9)} messages (exactly {@code rate x seconds} for whole seconds), so the level is
 * the average rate; the pattern only moves each message's intended time. The constant schedule puts message
 * {@code k} at {@code startNs + floor(k * 1e9 / ratePerSecond)}; the others are built on it ({@link #of}). A rate
 * of 0 means "as fast as possible": every message is due at once and the count is open, whatever the pattern.
 *
 * <p>For every schedule, intended times are non-decreasing in {@code k}, lie inside the phase, and
 * {@code dueBy(t)} is the number of {@code k} whose intended time is at or before {@code t}, capped at
 * {@link #scheduled}. Times are whole nanoseconds computed in integers, except the random draws of {@code poisson}.
 * A schedule is rebuilt from the same arguments by whoever needs it again (the interval counts): same pattern,
 * start, duration, rate and key give the same times.
 */
public abstract sealed class FlowSchedule
        permits FlowSchedule.Constant, FlowSchedule.Burst, FlowSchedule.OnOff, FlowSchedule.Poisson {
    static final long NANOS = 1_000_000_000L;
    /** The phases a key is made for. */
    public static final int WARMUP = 0;
    public static final int WINDOW = 1;

    final long startNs;
    final long durationNs;
    final long ratePerSecond;
    final long scheduled;

    FlowSchedule(long startNs, long durationNs, long ratePerSecond) {
        if (ratePerSecond < 0 || durationNs < 0) {
            throw new IllegalArgumentException("negative rate or duration");
        }
        this.startNs = startNs;
        this.durationNs = durationNs;
        this.ratePerSecond = ratePerSecond;
        this.scheduled = ratePerSecond == 0 ? Long.MAX_VALUE : scale(durationNs, ratePerSecond);
    }

    /** The constant schedule. */
    public static FlowSchedule constant(long startNs, long durationNs, long ratePerSecond) {
        return new Constant(startNs, durationNs, ratePerSecond);
    }

    /**
     * The schedule of {@code pattern} for one flow's phase.
     *
     * @param key what a random pattern draws from ({@link #key}); the others ignore it
     */
    public static FlowSchedule of(SendPattern pattern, long startNs, long durationNs, long ratePerSecond, long key) {
        if (ratePerSecond == 0) {
            return new Constant(startNs, durationNs, 0);
        }
        return switch (pattern.kind()) {
            case CONSTANT -> new Constant(startNs, durationNs, ratePerSecond);
            case BURST -> new Burst(startNs, durationNs, ratePerSecond, pattern.burst());
            case ONOFF -> new OnOff(startNs, durationNs, ratePerSecond, pattern.onNs(), pattern.offNs());
            case POISSON -> new Poisson(startNs, durationNs, ratePerSecond, key);
        };
    }

    /** The key of one flow's phase of one step, from the plan's seed: distinct draws for each. */
    public static long key(long seed, int step, int flow, int phase) {
        return SplitMix64.mix(seed ^ SplitMix64.mix(((long) step << 33) ^ ((long) flow << 1) ^ phase));
    }

    /** {@code ns * rate / 1e9} without overflow for any duration up to days and rates up to billions. */
    static long scale(long ns, long ratePerSecond) {
        return (ns / NANOS) * ratePerSecond + (ns % NANOS) * ratePerSecond / NANOS;
    }

    /**
     * Staggered starts: fills {@code offsetNs[i]}, how far flow i's schedule starts after the phase, with
     * {@code i * 1e9 / R} ns, R the rate over all flows, so the flows' messages fall due one at a time, evenly spaced,
     * rather than every flow's message k at the same instant. Each flow keeps its rate and its count; its offset is
     * less than one of its own intervals, so its last message still falls due inside the phase. At "max" (every rate
     * 0) the offsets are left as they are.
     */
    static void staggerOffsets(long[] flowRates, long[] offsetNs) {
        long total = 0;
        for (long r : flowRates) {
            total += r;
        }
        if (total == 0) {
            return;
        }
        for (int i = 0; i < offsetNs.length; i++) {
            long interval = flowRates[i] == 0 ? 0 : NANOS / flowRates[i];
            offsetNs[i] = Math.min(i * NANOS / total, Math.max(0, interval - 1));
        }
    }

    public boolean unlimited() {
        return ratePerSecond == 0;
    }

    /** Messages this phase calls for ({@code Long.MAX_VALUE} when unlimited). */
    public long scheduled() {
        return scheduled;
    }

    /** How many messages are due by {@code nowNs}: those whose intended time is at or before now. */
    public final long dueBy(long nowNs) {
        if (nowNs < startNs) {
            return 0;
        }
        if (ratePerSecond == 0) {
            return Long.MAX_VALUE;
        }
        return Math.min(scheduled, dueWithin(nowNs - startNs));
    }

    /** Messages whose intended time is at most {@code elapsedNs} after the start (may pass {@link #scheduled}). */
    abstract long dueWithin(long elapsedNs);

    /** Intended send time of message {@code sequence}; for an unlimited schedule the caller uses "now". */
    public final long intendedTimeNs(long sequence) {
        return startNs + offsetOf(sequence);
    }

    /** How long after the start message {@code sequence} is due. */
    abstract long offsetOf(long sequence);

    /** The constant schedule's offset of message {@code k}: {@code floor(k * 1e9 / rate)}. */
    final long constantOffset(long k) {
        return (k / ratePerSecond) * NANOS + (k % ratePerSecond) * NANOS / ratePerSecond;
    }

    /** How many messages the constant schedule has due within {@code elapsedNs} of the start (uncapped). */
    final long constantDueWithin(long elapsedNs) {
        // k is due when floor(k * 1e9 / rate) <= elapsed, i.e. k < (elapsed + 1) * rate / 1e9.
        long elapsedPlusOne = elapsedNs + 1;
        long whole = (elapsedPlusOne / NANOS) * ratePerSecond;
        long part = ((elapsedPlusOne % NANOS) * ratePerSecond + NANOS - 1) / NANOS;
        return whole + part;
    }

    public long startNs() {
        return startNs;
    }

    public long ratePerSecond() {
        return ratePerSecond;
    }

    /** {@code floor(a * b / c)} (or its ceiling), exactly, for {@code a, b >= 0} and {@code c > 0}. */
    static long mulDiv(long a, long b, long c, boolean up) {
        long high = Math.multiplyHigh(a, b);
        long low = a * b;
        if (high == 0 && low >= 0) {
            return up ? low / c + (low % c == 0 ? 0 : 1) : low / c;
        }
        BigInteger[] qr = BigInteger.valueOf(a).multiply(BigInteger.valueOf(b))
            .divideAndRemainder(BigInteger.valueOf(c));
        return qr[0].longValueExact() + (up && qr[1].signum() != 0 ? 1 : 0);
    }

    /** Evenly spaced: message k at {@code floor(k * 1e9 / rate)}. */
    static final class Constant extends FlowSchedule {
        Constant(long startNs, long durationNs, long ratePerSecond) {
            super(startNs, durationNs, ratePerSecond);
        }

        @Override
        long dueWithin(long elapsedNs) {
            return constantDueWithin(elapsedNs);
        }

        @Override
        long offsetOf(long sequence) {
            return constantOffset(sequence);
        }
    }

    /** Groups of {@code n}: message k is due at the constant time of {@code k - k mod n}. */
    static final class Burst extends FlowSchedule {
        private final long n;

        Burst(long startNs, long durationNs, long ratePerSecond, long n) {
            super(startNs, durationNs, ratePerSecond);
            if (n < 1) {
                throw new IllegalArgumentException("a burst of " + n);
            }
            this.n = n;
        }

        @Override
        long dueWithin(long elapsedNs) {
            // Group g is due when its first message g * n is due in the constant schedule: g * n < c.
            long c = constantDueWithin(elapsedNs);
            if (c == 0) {
                return 0;
            }
            long groups = (c - 1) / n + 1;
            return groups > scheduled / n ? scheduled : groups * n;
        }

        @Override
        long offsetOf(long sequence) {
            return constantOffset(sequence - sequence % n);
        }
    }

    /**
     * On and off: in each period of {@code on + off} from the start, the messages the constant schedule puts in the
     * period are squeezed into its first {@code on}: offset {@code p * P + u} becomes
     * {@code p * P + floor(u * on / P)}.
     */
    static final class OnOff extends FlowSchedule {
        private final long on;
        private final long period;

        OnOff(long startNs, long durationNs, long ratePerSecond, long on, long off) {
            super(startNs, durationNs, ratePerSecond);
            if (on <= 0 || off < 0) {
                throw new IllegalArgumentException("onoff needs ON > 0 and OFF >= 0");
            }
            this.on = on;
            this.period = Math.addExact(on, off);
        }

        @Override
        long dueWithin(long elapsedNs) {
            // The latest constant offset whose squeezed time is at most elapsed; the constant count up to it.
            long p = elapsedNs / period;
            long w = elapsedNs % period;
            long latest;
            if (w >= on) {
                latest = p * period + period - 1;
            } else {
                // floor(u * on / P) <= w  <=>  u * on < (w + 1) * P  <=>  u <= ceil((w + 1) * P / on) - 1 (< P).
                latest = p * period + mulDiv(w + 1, period, on, true) - 1;
            }
            return constantDueWithin(latest);
        }

        @Override
        long offsetOf(long sequence) {
            long t = constantOffset(sequence);
            long p = t / period;
            return p * period + mulDiv(t % period, on, period, false);
        }
    }

    /**
     * Poisson arrivals given the count: the phase's {@code S} messages at the ascending order statistics of S
     * uniform times over the phase (so the gaps are exponential at the rate), drawn from a counter-based SplitMix64
     * of the key: message j's draw is {@code mix(key + (j + 1) * gamma)}. Each order statistic follows from the one
     * before ({@code 1 - U(j) = (1 - U(j-1)) * V^(1 / (S - j))}), so the times are made in order: two cursors, one
     * for {@link #dueBy} and one for {@link #intendedTimeNs}, each walking forward (a step back starts it over).
     */
    static final class Poisson extends FlowSchedule {
        private final long key;
        private final Cursor due;
        private final Cursor intended;

        Poisson(long startNs, long durationNs, long ratePerSecond, long key) {
            super(startNs, durationNs, ratePerSecond);
            this.key = key;
            this.due = new Cursor();
            this.intended = new Cursor();
        }

        @Override
        long dueWithin(long elapsedNs) {
            if (elapsedNs >= durationNs) {
                return scheduled; // every time is inside the phase
            }
            if (due.placed > 0 && due.last > elapsedNs) {
                due.reset();
            }
            while (due.placed < scheduled && due.next <= elapsedNs) {
                due.advance();
            }
            return due.placed;
        }

        @Override
        long offsetOf(long sequence) {
            if (sequence >= scheduled) {
                return durationNs; // past the count: never due inside the phase
            }
            if (sequence < intended.placed) {
                if (sequence == intended.placed - 1) {
                    return intended.last;
                }
                intended.reset();
            }
            while (intended.placed < sequence) {
                intended.advance();
            }
            return intended.next;
        }

        /** A walk through the order statistics: {@code placed} messages passed, the time of the next. */
        private final class Cursor {
            long placed;
            /** The offset of message {@code placed} (when it is below the count). */
            long next;
            /** The offset of message {@code placed - 1}. */
            long last;
            /** {@code 1 - U(placed)}, as a double. */
            double remaining;

            Cursor() {
                reset();
            }

            void reset() {
                placed = 0;
                last = 0;
                remaining = 1.0;
                next = scheduled > 0 ? draw(0, 0) : durationNs;
            }

            void advance() {
                last = next;
                placed++;
                next = placed < scheduled ? draw(placed, last) : durationNs;
            }

            /** Message j's offset, from the remaining share after j - 1 and the offset {@code floor} before it. */
            private long draw(long j, long floor) {
                double u = SplitMix64.unit(key, j);
                remaining *= StrictMath.exp(StrictMath.log(u) / (double) (scheduled - j));
                long t = (long) (durationNs * (1.0 - remaining));
                return Math.max(floor, Math.min(durationNs - 1, t));
            }
        }
    }
}
