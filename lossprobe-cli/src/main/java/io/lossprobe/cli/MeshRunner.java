package io.lossprobe.cli;

import io.lossprobe.analysis.MeshResult;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
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
 *       the slack of each other). A pair that cannot start within {@code slackMs} of its slot's beginning (the pair
 *       before it ran long) is skipped, not run late: late, it would overlap the next round, where its hosts may
 *       be busy with other pairs.</li>
 * </ul>
 *
 * A pair's failure is its result ({@link PairRun} never throws); {@link #requestStop} skips what has not begun.
 */
final class MeshRunner {
    /** Runs one pair and says how it went; never throws. */
    interface PairRun {
        MeshResult.Pair run(MeshResult.Planned pair, Instant slotStart);
    }

    /** Waits until a time on the runner's clock. */
    interface Sleeper {
        void sleepUntil(Instant when) throws InterruptedException;
    }

    private final List<List<MeshPairs.Link>> rounds;
    private final Set<String> localSources;
    private final Instant start;
    private final long slotMs;
    private final long slackMs;
    private final Clock clock;
    private final Sleeper sleeper;
    private volatile boolean stopRequested;

    MeshRunner(List<List<MeshPairs.Link>> rounds, Set<String> localSources, Instant start, long slotMs, long slackMs,
               Clock clock, Sleeper sleeper) {
        this.rounds = rounds;
        this.localSources = localSources;
        this.start = start;
        this.slotMs = slotMs;
        this.slackMs = slackMs;
        this.clock = clock;
        this.sleeper = sleeper;
    }

    /** Sleeps on the system clock (in steps, so a changed wall clock is noticed). */
    static final Sleeper SYSTEM_SLEEPER = when -> {
        while (true) {
            long ms = Duration.between(Instant.now(), when).toMillis();
            if (ms <= 0) {
                return;
            }
            Thread.sleep(Math.min(ms, 1_000));
        }
    };

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
                List<MeshResult.Pair> done = runRound(local, slotStart(r), pool, pairRun);
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

    private List<MeshResult.Pair> runRound(List<MeshResult.Planned> local, Instant slotStart, ExecutorService pool,
                                           PairRun pairRun) throws InterruptedException {
        if (slotStart != null && !stopRequested) {
            sleeper.sleepUntil(slotStart);
        }
        if (stopRequested) {
            return local.stream().map(p -> skipped(p, "the mesh was stopped before it began")).toList();
        }
        if (slotStart != null) {
            long lateMs = Duration.between(slotStart, clock.instant()).toMillis();
            if (lateMs > slackMs) {
                return local.stream().map(p -> skipped(p, String.format(java.util.Locale.ROOT,
                    "its slot began %.1fs before this host was free (more than the slack of %.1fs): the pair "
                        + "before ran long or this host started late; a longer --slot avoids it",
                    lateMs / 1e3, slackMs / 1e3))).toList();
            }
        }
        List<Future<MeshResult.Pair>> running = new ArrayList<>();
        for (MeshResult.Planned p : local) {
            running.add(pool.submit(() -> pairRun.run(p, slotStart)));
        }
        List<MeshResult.Pair> done = new ArrayList<>();
        for (int i = 0; i < running.size(); i++) {
            try {
                done.add(running.get(i).get());
            } catch (java.util.concurrent.ExecutionException e) {
                // PairRun never throws; if it does, the pair failed and the mesh goes on.
                done.add(new MeshResult.Pair(local.get(i).source(), local.get(i).target(), local.get(i).round(),
                    MeshResult.FAILED, LossprobeCommand.describe(e.getCause()), null, null, null, null));
            }
        }
        return done;
    }

    private static MeshResult.Pair skipped(MeshResult.Planned p, String why) {
        return new MeshResult.Pair(p.source(), p.target(), p.round(), MeshResult.SKIPPED, why, null, null, null,
            null);
    }
}
