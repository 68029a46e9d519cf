package io.lossprobe.cli;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * A mesh's time on this host. The hosts of a mesh share only their wall clocks, and need them only once: round 0
 * begins when each host's wall clock reads the start (NTP keeps them within the slack of each other). From then on
 * this host counts the rounds on its monotonic clock ({@link System#nanoTime}: on Linux CLOCK_MONOTONIC, which NTP
 * keeps at the right rate but never steps), so a later step of the wall clock (an NTP correction, a virtual
 * machine's clock set after a pause, a {@code date -s}) moves neither a wait nor a slot's end: hosts that agreed at
 * the start keep agreeing. The wall clock is still read after every wait, and how far it has moved from the
 * monotonic timeline is the step, which the pairs' records report.
 */
final class MeshClock {
    /** Sleeps on the monotonic clock. */
    interface Sleeper {
        void sleepNanos(long ns) throws InterruptedException;
    }

    /** Smaller differences between the wall clock and the timeline are the cost of reading two clocks. */
    static final long STEP_REPORTED_MS = 100;
    /** The longest sleep between two looks at a stop request (and, before the start, at the wall clock). */
    private static final long LOOK_EVERY_NS = TimeUnit.SECONDS.toNanos(1);

    private final Clock wall;
    private final LongSupplier nanos;
    private final Sleeper sleeper;
    private volatile Instant anchorWall;
    private volatile long anchorNanos;

    MeshClock(Clock wall, LongSupplier nanos, Sleeper sleeper) {
        this.wall = wall;
        this.nanos = nanos;
        this.sleeper = sleeper;
    }

    /** The system's wall and monotonic clocks. */
    static MeshClock system() {
        return new MeshClock(Clock.systemUTC(), System::nanoTime, TimeUnit.NANOSECONDS::sleep);
    }

    /**
     * Waits until the wall clock reads {@code start} (re-reading it at least every second, so a step before the
     * start is followed: the start is the one instant the hosts agree on), then counts on the monotonic clock from
     * there. Returns at once when the start has passed; false when {@code stop} asked to stop first.
     */
    boolean startAt(Instant start, BooleanSupplier stop) throws InterruptedException {
        long ns;
        while (!stop.getAsBoolean() && (ns = Duration.between(wall.instant(), start).toNanos()) > 0) {
            sleeper.sleepNanos(Math.min(ns, LOOK_EVERY_NS));
        }
        anchorNanos = nanos.getAsLong();
        anchorWall = wall.instant();
        return !stop.getAsBoolean();
    }

    /**
     * Now on the timeline: the wall clock's reading at the start moved on by the monotonic clock since (before the
     * start, the wall clock itself).
     */
    Instant now() {
        Instant at = anchorWall;
        return at == null ? wall.instant() : at.plusNanos(nanos.getAsLong() - anchorNanos);
    }

    /**
     * Sleeps until {@code when} on the timeline, on the monotonic clock alone (a step of the wall clock meanwhile
     * neither shortens nor lengthens it); false when {@code stop} asked to stop first.
     */
    boolean sleepUntil(Instant when, BooleanSupplier stop) throws InterruptedException {
        long ns;
        while (!stop.getAsBoolean() && (ns = Duration.between(now(), when).toNanos()) > 0) {
            sleeper.sleepNanos(Math.min(ns, LOOK_EVERY_NS));
        }
        return !stop.getAsBoolean();
    }

    /** How far the wall clock has stepped from the timeline since the start (ahead when positive); 0 before. */
    long wallStepMs() {
        return anchorWall == null ? 0 : Duration.between(now(), wall.instant()).toMillis();
    }

    /** The wall clock, for timestamps in the results. */
    Instant wallNow() {
        return wall.instant();
    }

    /** The monotonic clock, for durations. */
    long nanoTime() {
        return nanos.getAsLong();
    }
}
