package io.lossprobe.cli;

import io.lossprobe.analysis.MeshResult;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * Runs this host's share of a mesh, round by round. Two ways to keep rounds apart:
 *
 * <ul>
 *   <li>Back to back ({@code start == null}): this process is the source of every pair, so a round starts when the
 *       previous one has finished.</li>
 *   <li>On the clock: every source host runs its own pairs, and round r begins at {@code start + r * slot} on every
 *       host, so hosts need only agree on the host list, the options and the start (and keep their clocks within
 *       the slack of each other at the start). From the start on, the rounds are counted on the monotonic clock
 *       ({@link MeshClock}), so a step of the wall clock moves no round. A pair runs when its slot begins; one that
 *       this host reaches more than {@code slackMs} late (the pair before ran long, or the machine stalled) runs
 *       only if its planned length still ends before its slot does, less the slack, and is otherwise skipped: late,
 *       it would overlap the next round, where its hosts may be busy with other pairs.</li>
 * </ul>
 *
 * A pair's failure is its result ({@link PairRun} never throws); {@link #requestStop} skips what has not begun.
 */
final class MeshRunner {
    /** Runs one pair and says how it went; never throws. */
    interface PairRun {
        /** @param slot when and how the pair's slot began; null when rounds run back to back */
        MeshResult.Pair run(MeshResult.Planned pair, Slot slot);
    }

    /**
     * A pair's slot, as this host found it when it was free to start the pair.
     *
     * @param start       when the slot began, on the mesh's timeline
     * @param stopAt      when a pair still running is stopped: the slot's end less the slack
     * @param clockStepMs how far this host's wall clock had stepped from the timeline since round 0 began, or null
     *                    when it had not (by {@link MeshClock#STEP_REPORTED_MS} or more)
     * @param note        why the pair starts late, and any clock step, in words; null when neither
     */
    record Slot(Instant start, Instant stopAt, Long clockStepMs, String note) {
    }

    private final List<List<MeshPairs.Link>> rounds;
    private final Set<String> localSources;
    private final Instant start;
    private final long slotMs;
    private final long slackMs;
    private final long plannedPairMs;
    private final MeshClock clock;
    private volatile boolean stopRequested;

    /** @param plannedPairMs a pair's planned length, set-up included ({@link MeshSchedule#estimatePairMs}) */
    MeshRunner(List<List<MeshPairs.Link>> rounds, Set<String> localSources, Instant start, long slotMs, long slackMs,
               long plannedPairMs, MeshClock clock) {
        this.rounds = rounds;
        this.localSources = localSources;
        this.start = start;
        this.slotMs = slotMs;
        this.slackMs = slackMs;
        this.plannedPairMs = plannedPairMs;
        this.clock = clock;
    }

    void requestStop() {
        stopRequested = true;
    }

    /** When round {@code r} begins (on the clock), or null when rounds run back to back. */
    Instant slotStart(int round) {
        return start == null ? null : start.plusMillis(slotMs * round);
    }

    /**
     * Runs this host's pairs; {@code roundDone} hears each round's outcomes (for writing the file as it goes).
     *
     * @return every local pair's outcome, in schedule order
     */
    List<MeshResult.Pair> run(PairRun pairRun, Consumer<List<MeshResult.Pair>> roundDone)
        throws InterruptedException {
        List<MeshResult.Pair> all = new ArrayList<>();
        int widest = rounds.stream().mapToInt(r -> (int) r.stream().filter(this::isLocal).count()).max().orElse(0);
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, widest), r -> {
            Thread t = new Thread(r, "lossprobe-mesh-pair");
            t.setDaemon(true);
            return t;
        });
        try {
            Instant free = clock.now(); // when this host could first start a pair
            if (start != null) {
                clock.startAt(start, () -> stopRequested);
            }
            Integer previous = null; // the last round this host had pairs in
            for (int r = 0; r < rounds.size(); r++) {
                List<MeshResult.Planned> local = new ArrayList<>();
                for (MeshPairs.Link l : rounds.get(r)) {
                    if (isLocal(l)) {
                        local.add(new MeshResult.Planned(l.source(), l.target(), r));
                    }
                }
                if (local.isEmpty()) {
                    continue;
                }
                List<MeshResult.Pair> done = runRound(local, free, previous, pool, pairRun);
                free = clock.now();
                previous = r;
                all.addAll(done);
                roundDone.accept(done);
            }
        } finally {
            pool.shutdownNow();
        }
        return all;
    }

    private boolean isLocal(MeshPairs.Link l) {
        return localSources.contains(l.source());
    }

    /**
     * @param free     when this host was free to start the round's pairs
     * @param previous the last round this host had pairs in, or null
     */
    private List<MeshResult.Pair> runRound(List<MeshResult.Planned> local, Instant free, Integer previous,
                                           ExecutorService pool, PairRun pairRun) throws InterruptedException {
        if (stopRequested) {
            return stopped(local);
        }
        Slot slot = null;
        if (start != null) {
            Instant slotStart = slotStart(local.get(0).round());
            if (!clock.sleepUntil(slotStart, () -> stopRequested)) {
                return stopped(local);
            }
            long lateMs = Duration.between(slotStart, clock.now()).toMillis();
            String late = lateMs <= slackMs ? null : String.format(Locale.ROOT, "its slot began %s before this host "
                + "was free (%s)", MeshSchedule.minutes(lateMs), whyLate(free, slotStart, lateMs, previous));
            long leftMs = slotMs - slackMs - lateMs;
            slot = slot(slotStart, late);
            if (late != null && plannedPairMs > leftMs) {
                String why = String.format(Locale.ROOT, "%s, and its planned %s no longer fit in the %s left before "
                    + "the slot's end less the slack; a longer --slot avoids it%s", late,
                    MeshSchedule.minutes(plannedPairMs), MeshSchedule.minutes(Math.max(0, leftMs)),
                    slot.clockStepMs() == null ? "" : "; " + stepText(slot.clockStepMs()));
                Long stepMs = slot.clockStepMs();
                return local.stream().map(p -> skipped(p, why, stepMs)).toList();
            }
        }
        List<Future<MeshResult.Pair>> running = new ArrayList<>();
        for (MeshResult.Planned p : local) {
            Slot s = slot;
            running.add(pool.submit(() -> pairRun.run(p, s)));
        }
        List<MeshResult.Pair> done = new ArrayList<>();
        for (int i = 0; i < running.size(); i++) {
            try {
                done.add(running.get(i).get());
            } catch (java.util.concurrent.ExecutionException e) {
                // PairRun never throws; if it does, the pair failed and the mesh goes on.
                done.add(new MeshResult.Pair(local.get(i).source(), local.get(i).target(), local.get(i).round(),
                    MeshResult.FAILED, LossprobeCommand.describe(e.getCause()), null, null, null, null, null, null));
            }
        }
        return done;
    }

    /** Why this host reached a slot late: it was still busy when the slot began, or its wait ended late. */
    private static String whyLate(Instant free, Instant slotStart, long lateMs, Integer previous) {
        if (!free.isAfter(slotStart)) {
            return "it woke " + MeshSchedule.minutes(lateMs) + " late from its wait for the slot: the machine stalled";
        }
        long busyMs = Duration.between(slotStart, free).toMillis();
        return previous == null
            ? String.format(Locale.ROOT, "this host's mesh began %s after the slot", MeshSchedule.minutes(busyMs))
            : String.format(Locale.ROOT, "its pairs of round %d ran until %s into this slot", previous,
                MeshSchedule.minutes(busyMs));
    }

    /** The slot as found now: its end less the slack, and what the wall clock has done since round 0. */
    private Slot slot(Instant slotStart, String late) {
        long stepMs = clock.wallStepMs();
        boolean stepped = Math.abs(stepMs) >= MeshClock.STEP_REPORTED_MS;
        String step = stepped ? stepText(stepMs) : null;
        String note = late == null ? step : step == null ? "started late: " + late : "started late: " + late + "; "
            + step;
        return new Slot(slotStart, slotStart.plusMillis(slotMs - slackMs), stepped ? stepMs : null, note);
    }

    private static String stepText(long stepMs) {
        return String.format(Locale.ROOT, "this host's wall clock has stepped %s%s since round 0 began; the rounds "
            + "keep to the monotonic clock", stepMs > 0 ? "+" : "-", MeshSchedule.minutes(Math.abs(stepMs)));
    }

    private static List<MeshResult.Pair> stopped(List<MeshResult.Planned> local) {
        return local.stream().map(p -> skipped(p, "the mesh was stopped before it began", null)).toList();
    }

    private static MeshResult.Pair skipped(MeshResult.Planned p, String why, Long clockStepMs) {
        return new MeshResult.Pair(p.source(), p.target(), p.round(), MeshResult.SKIPPED, why, null, null, null,
            clockStepMs, null, null);
    }
}
