package io.lossprobe.cli;

import io.lossprobe.analysis.MeshResult;
import io.lossprobe.core.plan.Plan;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Packs a mesh's pairs into rounds in which no host takes part in more than one pair (it neither sends nor
 * receives twice, nor both at once), so each pair's counters, CPU and link are its own, with at most
 * {@code maxParallel} pairs per round. First fit in the order given: {@link MeshPairs} lists pairs so that this
 * is optimal for a full mesh and a ring. With {@code --start-at}, rounds run on the clock: a slot each, long
 * enough for the plan and its set-up.
 */
final class MeshSchedule {
    /**
     * Connect, authenticate, negotiate, warm the clock exchange and say goodbye. Measured in the lab: 0.5 s on warm
     * JVMs, 3.9 s for a source's first pair on a cold JVM (the JIT), and more when several cold JVMs share a core.
     */
    static final long PAIR_OVERHEAD_MS = 4_000;
    /** Opening and closing a transport's senders and receivers (an Aeron driver's start is the slowest). */
    static final long TRANSPORT_OVERHEAD_MS = 1_000;
    /** The clock estimates and counter samples around each step. */
    static final long STEP_OVERHEAD_MS = 300;

    private MeshSchedule() {
    }

    /** @param maxParallel at most this many pairs per round; 0 for no limit beyond one pair per host */
    static List<List<MeshPairs.Link>> rounds(List<MeshPairs.Link> pairs, int maxParallel) {
        if (maxParallel < 0) {
            throw new IllegalArgumentException("--parallel must be 0 (no limit) or more");
        }
        LinkedList<MeshPairs.Link> left = new LinkedList<>(pairs);
        Set<String> hosts = new HashSet<>();
        pairs.forEach(l -> {
            hosts.add(l.source());
            hosts.add(l.target());
        });
        int fullRound = hosts.size() / 2; // every host busy: nothing more fits
        List<List<MeshPairs.Link>> rounds = new ArrayList<>();
        while (!left.isEmpty()) {
            List<MeshPairs.Link> round = new ArrayList<>();
            Set<String> busy = new HashSet<>();
            var it = left.iterator();
            while (it.hasNext() && round.size() < fullRound && (maxParallel == 0 || round.size() < maxParallel)) {
                MeshPairs.Link l = it.next();
                if (!busy.contains(l.source()) && !busy.contains(l.target())) {
                    busy.add(l.source());
                    busy.add(l.target());
                    round.add(l);
                    it.remove();
                }
            }
            rounds.add(round);
        }
        return rounds;
    }

    /** A pair's planned length: the plan's, plus the set-up around it. */
    static long estimatePairMs(Plan plan) {
        long stepMs = (plan.warmupNs() + plan.durationNs() + plan.drainNs()) / 1_000_000 + STEP_OVERHEAD_MS;
        long perTransport = TRANSPORT_OVERHEAD_MS + stepMs * plan.levels().size();
        return PAIR_OVERHEAD_MS + perTransport * plan.transports().size();
    }

    /**
     * A pair's planned length plus the slack at each end of the round (a pair may start that late, and the hosts'
     * clocks may disagree by that much), rounded up to a whole second.
     */
    static long estimateSlotMs(Plan plan, long slackMs) {
        long ms = estimatePairMs(plan) + 2 * slackMs;
        return (ms + 999) / 1000 * 1000;
    }

    /**
     * {@code --start-at}: an ISO-8601 instant, or a UTC time of day taken as its occurrence nearest to {@code now}
     * (so hosts whose timers fire a little apart, on either side of midnight, agree).
     */
    static Instant parseStart(String text, Instant now) {
        String t = text.strip();
        try {
            return Instant.parse(t);
        } catch (DateTimeParseException e) {
            // Not an instant: a time of day?
        }
        LocalTime time;
        try {
            time = LocalTime.parse(t);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("--start-at '" + text + "' is neither an instant "
                + "(2026-12-01T03:05:00Z) nor a UTC time of day (03:05)");
        }
        LocalDate today = now.atZone(ZoneOffset.UTC).toLocalDate();
        Instant best = null;
        for (int d = -1; d <= 1; d++) {
            Instant candidate = today.plusDays(d).atTime(time).toInstant(ZoneOffset.UTC);
            if (best == null || Math.abs(candidate.toEpochMilli() - now.toEpochMilli())
                < Math.abs(best.toEpochMilli() - now.toEpochMilli())) {
                best = candidate;
            }
        }
        return best;
    }

    /** A duration for people: seconds, minutes or hours. */
    static String minutes(long ms) {
        if (ms < 60_000) {
            return String.format(Locale.ROOT, "%.1fs", ms / 1e3);
        }
        if (ms < 7_200_000) {
            return String.format(Locale.ROOT, "%.1f min", ms / 60e3);
        }
        return String.format(Locale.ROOT, "%.1f h", ms / 3600e3);
    }

    /** The rounds, one a line, with their start times on the clock and the pairs that run here. */
    static void print(PrintWriter out, List<List<MeshPairs.Link>> rounds, Set<String> local, Instant start,
                      long slotMs) {
        for (int r = 0; r < rounds.size(); r++) {
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "round %d%s:", r,
                start == null ? "" : " at " + start.plusMillis(r * slotMs)));
            for (MeshPairs.Link l : rounds.get(r)) {
                line.append("  ").append(l.source()).append(" -> ").append(l.target())
                    .append(local.contains(l.source()) ? " (here)" : "");
            }
            out.println(line);
        }
    }

    /** How the rounds are timed: back to back, or in slots from the start. */
    static String timetable(Instant start, long slotMs, int rounds) {
        return start == null ? "rounds back to back"
            : String.format(Locale.ROOT, "slot %s from %s, about %s in all", StepTable.nanos(slotMs * 1_000_000),
                start, minutes(rounds * slotMs));
    }

    /** The schedule the results file records: every pair with its round, the slots when timed. */
    static MeshResult.Schedule record(List<List<MeshPairs.Link>> rounds, int parallel, Instant start, long slotMs) {
        List<MeshResult.Planned> planned = new ArrayList<>();
        for (int r = 0; r < rounds.size(); r++) {
            for (MeshPairs.Link l : rounds.get(r)) {
                planned.add(new MeshResult.Planned(l.source(), l.target(), r));
            }
        }
        return new MeshResult.Schedule(rounds.size(), parallel, start == null ? 0 : slotMs,
            start == null ? null : start.toString(), planned);
    }
}
