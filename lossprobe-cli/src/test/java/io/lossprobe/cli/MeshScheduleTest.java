package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.analysis.MeshResult;
import io.lossprobe.analysis.MeshResult.Host;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Which pairs a mesh probes, the rounds they pack into, the host list, the start, and running on the clock. */
class MeshScheduleTest {
    private static List<Host> hosts(int n) {
        return IntStream.range(0, n).mapToObj(i -> new Host("h" + i, "10.0.0." + (i + 1), 7400)).toList();
    }

    private static void assertNoHostTwiceInARound(List<List<MeshPairs.Link>> rounds) {
        for (List<MeshPairs.Link> round : rounds) {
            Set<String> busy = new HashSet<>();
            for (MeshPairs.Link l : round) {
                assertThat(busy.add(l.source())).as("%s busy twice in %s", l.source(), round).isTrue();
                assertThat(busy.add(l.target())).as("%s busy twice in %s", l.target(), round).isTrue();
            }
        }
    }

    @ParameterizedTest(name = "{0} hosts")
    @ValueSource(ints = {2, 3, 4, 5, 8, 9, 16, 31})
    void aFullMeshIsEveryOrderedPairOnceInTheFewestRounds(int n) {
        List<MeshPairs.Link> pairs = MeshPairs.select(hosts(n), "full", null, 0);
        assertThat(pairs).hasSize(n * (n - 1)).doesNotHaveDuplicates()
            .allSatisfy(l -> assertThat(l.source()).isNotEqualTo(l.target()));
        List<List<MeshPairs.Link>> rounds = MeshSchedule.rounds(pairs, 0);
        assertNoHostTwiceInARound(rounds);
        // Each host is in 2(n-1) pairs and in one pair per round: no schedule has fewer rounds than that for even n;
        // for odd n a round leaves a host out, so 2n.
        assertThat(rounds).hasSize(n % 2 == 0 ? 2 * (n - 1) : 2 * n);
        assertThat(rounds.stream().mapToInt(List::size).sum()).isEqualTo(n * (n - 1));
    }

    @Test
    void parallelBoundsEachRound() {
        List<List<MeshPairs.Link>> rounds = MeshSchedule.rounds(MeshPairs.select(hosts(8), "full", null, 0), 2);
        assertThat(rounds).allSatisfy(r -> assertThat(r.size()).isBetween(1, 2));
        assertThat(rounds).hasSize(28);
        assertNoHostTwiceInARound(rounds);
        assertThatThrownBy(() -> MeshSchedule.rounds(List.of(), -1)).hasMessageContaining("--parallel");
    }

    @ParameterizedTest(name = "{0} hosts")
    @ValueSource(ints = {2, 3, 4, 7, 100})
    void aRingCrossesEveryHostOnceEachWayInTwoOrThreeRounds(int n) {
        List<MeshPairs.Link> ring = MeshPairs.select(hosts(n), "ring", null, 0);
        assertThat(ring).hasSize(n);
        assertThat(ring.stream().map(MeshPairs.Link::source).distinct()).hasSize(n);
        assertThat(ring.stream().map(MeshPairs.Link::target).distinct()).hasSize(n);
        List<List<MeshPairs.Link>> rounds = MeshSchedule.rounds(ring, 0);
        assertNoHostTwiceInARound(rounds);
        assertThat(rounds).hasSize(n % 2 == 0 ? 2 : 3);
    }

    @Test
    void aSampleIsKRotationsPickedByTheSeed() {
        List<Host> hosts = hosts(300);
        List<MeshPairs.Link> a = MeshPairs.select(hosts, "sample:4", null, 20261201);
        assertThat(a).hasSize(1200).doesNotHaveDuplicates().allSatisfy(l -> assertThat(l.source())
            .isNotEqualTo(l.target()));
        assertThat(MeshPairs.select(hosts, "sample:4", null, 20261201)).isEqualTo(a);
        assertThat(MeshPairs.select(hosts, "sample:4", null, 20261202)).isNotEqualTo(a);
        List<List<MeshPairs.Link>> rounds = MeshSchedule.rounds(a, 0);
        assertNoHostTwiceInARound(rounds);
        assertThat(rounds.size()).isLessThanOrEqualTo(3 * 4);
        assertThatThrownBy(() -> MeshPairs.select(hosts(3), "sample:3", null, 1)).hasMessageContaining("K from 1 to 2");
    }

    @Test
    void targetsAreProbedByEveryOtherHost() {
        List<MeshPairs.Link> pairs = MeshPairs.select(hosts(6), "targets", List.of("h0", "10.0.0.2"), 0);
        assertThat(pairs).hasSize(10).doesNotHaveDuplicates();
        assertThat(pairs).extracting(MeshPairs.Link::target).containsOnly("h0", "h1");
        List<List<MeshPairs.Link>> rounds = MeshSchedule.rounds(pairs, 0);
        assertNoHostTwiceInARound(rounds);
        // h0 is in six pairs (four sources to it, h0 -> h1, h1 -> h0): no fewer rounds can do.
        assertThat(rounds).hasSize(6);
        assertThatThrownBy(() -> MeshPairs.select(hosts(3), "targets", List.of("nope"), 0))
            .hasMessageContaining("'nope' is not one of the hosts");
        assertThatThrownBy(() -> MeshPairs.select(hosts(3), "star", null, 0))
            .hasMessageContaining("--pairs must be full, ring, targets or sample:K");
    }

    @Test
    void hostsComeFromLinesFlagsAndNames(@TempDir Path dir) throws Exception {
        assertThat(MeshHosts.parse("web1=10.0.0.1")).isEqualTo(new Host("web1", "10.0.0.1", 7400));
        assertThat(MeshHosts.parse("web1 10.0.0.1:7500")).isEqualTo(new Host("web1", "10.0.0.1", 7500));
        assertThat(MeshHosts.parse("[fd00::1]:7401")).isEqualTo(new Host("fd00::1", "fd00::1", 7401));
        assertThat(MeshHosts.parse("db.example")).isEqualTo(new Host("db.example", "db.example", 7400));
        Path file = Files.writeString(dir.resolve("hosts"), "# lab\nlm-rx 198.18.0.1\n\nlm-tx1 198.18.0.11  # a\n");
        assertThat(MeshHosts.read(file)).containsExactly(new Host("lm-rx", "198.18.0.1", 7400),
            new Host("lm-tx1", "198.18.0.11", 7400));
        Path bad = Files.writeString(dir.resolve("bad"), "a 10.0.0.1\nb 10.0.0.2 extra\n");
        assertThatThrownBy(() -> MeshHosts.read(bad)).hasMessage(bad + " line 2: host 'b 10.0.0.2 extra' is not "
            + "NAME ADDRESS[:PORT]");
        assertThatThrownBy(() -> MeshHosts.check(List.of(MeshHosts.parse("a=10.0.0.1"), MeshHosts.parse("a=10.0.0.2"))))
            .hasMessage("host 'a' is listed twice");
        assertThatThrownBy(() -> MeshHosts.check(List.of(MeshHosts.parse("a=10.0.0.1"), MeshHosts.parse("b=10.0.0.1"))))
            .hasMessage("address 10.0.0.1:7400 is listed twice");
        assertThatThrownBy(() -> MeshHosts.check(List.of(MeshHosts.parse("a")))).hasMessageContaining("at least two");
        assertThat(MeshHosts.resolve("localhost:7401", new AddressFamilyOption())).isNotEmpty()
            .allSatisfy(h -> assertThat(h.port()).isEqualTo(7401));
    }

    @Test
    void theStartIsAnInstantOrTheNearestTimeOfDay() {
        Instant now = Instant.parse("2026-12-01T23:58:00Z");
        assertThat(MeshSchedule.parseStart("2026-12-02T00:05:00Z", now)).isEqualTo("2026-12-02T00:05:00Z");
        // Two hosts whose timers fired either side of midnight agree on the same start.
        assertThat(MeshSchedule.parseStart("00:05", now)).isEqualTo("2026-12-02T00:05:00Z");
        assertThat(MeshSchedule.parseStart("00:05", Instant.parse("2026-12-02T00:01:00Z")))
            .isEqualTo("2026-12-02T00:05:00Z");
        assertThat(MeshSchedule.parseStart("23:50:30", now)).isEqualTo("2026-12-01T23:50:30Z");
        assertThatThrownBy(() -> MeshSchedule.parseStart("tonight", now)).hasMessageContaining("--start-at 'tonight'");
    }

    /**
     * A host's two clocks on virtual time: the wall clock and the monotonic one move together when the runner sleeps
     * or a pair runs, except at one chosen moment of the monotonic clock (in the middle of a wait), where the wall
     * clock alone steps, or both jump at once (the machine stalled: nothing ran).
     */
    private static final class TwoClocks extends Clock {
        Instant wall;
        long monoNs;
        long eventAtNs = Long.MAX_VALUE;
        long wallStepMs;
        long stallMs;

        TwoClocks(Instant wall) {
            this.wall = wall;
        }

        /** Steps the wall clock by {@code ms} (or stalls both clocks) when the monotonic clock reaches {@code atS}. */
        TwoClocks at(long atS, long wallStepMs, long stallMs) {
            this.eventAtNs = atS * 1_000_000_000L;
            this.wallStepMs = wallStepMs;
            this.stallMs = stallMs;
            return this;
        }

        void advanceNs(long ns) {
            long end = monoNs + ns;
            if (eventAtNs > monoNs && eventAtNs <= end) {
                wall = wall.plusMillis(wallStepMs + stallMs);
                monoNs += stallMs * 1_000_000;
                end += stallMs * 1_000_000;
                eventAtNs = Long.MAX_VALUE;
            }
            wall = wall.plusNanos(end - monoNs);
            monoNs = end;
        }

        MeshClock meshClock() {
            return new MeshClock(this, () -> monoNs, this::advanceNs);
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return wall;
        }
    }

    private static final Instant T0 = Instant.parse("2026-12-01T03:05:00Z");

    /** h0 sends in every round; the other pairs run on their own hosts. */
    private static final List<List<MeshPairs.Link>> H0_EVERY_ROUND = List.of(
        List.of(new MeshPairs.Link("h0", "h1"), new MeshPairs.Link("h2", "h3")),
        List.of(new MeshPairs.Link("h0", "h2"), new MeshPairs.Link("h1", "h3")),
        List.of(new MeshPairs.Link("h0", "h3"), new MeshPairs.Link("h2", "h1")));

    /** Each pair's start as "round@monotonic seconds", and the outcomes. */
    private record H0Run(List<String> started, List<MeshResult.Pair> done) {
    }

    /**
     * Runs h0's pairs in 10 s slots with 2 s of slack from T0, each planned at {@code plannedS} seconds and taking
     * {@code pairsS[round]} (the last for later rounds).
     */
    private static H0Run runH0(TwoClocks host, List<List<MeshPairs.Link>> rounds, long plannedS, long... pairsS)
        throws Exception {
        MeshRunner runner = new MeshRunner(rounds, Set.of("h0"), T0, 10_000, 2_000, plannedS * 1000,
            host.meshClock());
        List<String> started = new ArrayList<>();
        List<MeshResult.Pair> done = runner.run((p, slot) -> {
            started.add(p.round() + "@" + host.monoNs / 1_000_000_000.0);
            assertThat(slot.start()).isEqualTo(T0.plusSeconds(10L * p.round()));
            assertThat(slot.stopAt()).isEqualTo(slot.start().plusSeconds(8));
            host.advanceNs(pairsS[Math.min(p.round(), pairsS.length - 1)] * 1_000_000_000L);
            return new MeshResult.Pair(p.source(), p.target(), p.round(), MeshResult.COMPLETE, null, null, null,
                null, slot.clockStepMs(), slot.note(), null);
        }, round -> { });
        return new H0Run(started, done);
    }

    @Test
    void onTheClockEachPairStartsAtItsSlotAndOneThatCannotFitAnyMoreIsSkipped() throws Exception {
        TwoClocks host = new TwoClocks(T0.minusSeconds(30));
        List<List<MeshPairs.Link>> rounds = new ArrayList<>(H0_EVERY_ROUND);
        rounds.add(List.of(new MeshPairs.Link("h2", "h0")));
        rounds.add(List.of(new MeshPairs.Link("h0", "h1")));
        // The pair of round 1 runs 13 s, 3 s past its slot; the next, planned at 6 s, no longer fits its slot.
        H0Run run = runH0(host, rounds, 6, 4, 13, 4);
        assertThat(run.done()).extracting(MeshResult.Pair::round).containsExactly(0, 1, 2, 4);
        assertThat(run.started()).containsExactly("0@30.0", "1@40.0", "4@70.0");
        MeshResult.Pair skipped = run.done().get(2);
        assertThat(skipped.status()).isEqualTo(MeshResult.SKIPPED);
        assertThat(skipped.error()).isEqualTo("its slot began 3.0s before this host was free (its pairs of round 1 "
            + "ran until 3.0s into this slot), and its planned 6.0s no longer fit in the 5.0s left before the slot's "
            + "end less the slack; a longer --slot avoids it");
        assertThat(run.done()).filteredOn(p -> p.status().equals(MeshResult.COMPLETE))
            .allSatisfy(p -> assertThat(p.note()).isNull());
    }

    @Test
    void aPairThatStartsLateButStillFitsItsSlotRunsAndSaysWhy() throws Exception {
        TwoClocks host = new TwoClocks(T0.minusSeconds(30));
        // As above, but the pairs are planned at 4 s: round 2's pair, reached 3 s late, still ends by 48 s + 8 s.
        H0Run run = runH0(host, H0_EVERY_ROUND, 4, 4, 13, 4);
        assertThat(run.started()).containsExactly("0@30.0", "1@40.0", "2@53.0");
        assertThat(run.done()).allSatisfy(p -> assertThat(p.status()).isEqualTo(MeshResult.COMPLETE));
        assertThat(run.done().get(2).note()).isEqualTo("started late: its slot began 3.0s before this host was free "
            + "(its pairs of round 1 ran until 3.0s into this slot)");
    }

    @ParameterizedTest(name = "the wall clock steps {0} ms")
    @ValueSource(longs = {8_000, -8_000})
    void aStepOfTheWallClockInTheMiddleOfAWaitMovesNoRound(long stepMs) throws Exception {
        // Waiting for round 1 (due at 40 s on the monotonic clock), at 37 s the wall clock steps 8 s.
        TwoClocks host = new TwoClocks(T0.minusSeconds(30)).at(37, stepMs, 0);
        H0Run run = runH0(host, H0_EVERY_ROUND, 4, 3);
        assertThat(run.started()).containsExactly("0@30.0", "1@40.0", "2@50.0");
        assertThat(run.done()).allSatisfy(p -> assertThat(p.status()).isEqualTo(MeshResult.COMPLETE));
        assertThat(run.done().get(0).clockStepMs()).isNull();
        assertThat(run.done().get(0).note()).isNull();
        assertThat(run.done().subList(1, 3)).allSatisfy(p -> {
            assertThat(p.clockStepMs()).isEqualTo(stepMs);
            assertThat(p.note()).isEqualTo("this host's wall clock has stepped " + (stepMs > 0 ? "+" : "-")
                + "8.0s since round 0 began; the rounds keep to the monotonic clock");
        });
    }

    @Test
    void aStepOfTheWallClockBeforeTheStartIsFollowed() throws Exception {
        // The start is where the hosts agree: before it, this host's wall clock is the one to go by.
        TwoClocks host = new TwoClocks(T0.minusSeconds(30)).at(10, 8_000, 0);
        H0Run run = runH0(host, H0_EVERY_ROUND, 4, 3);
        assertThat(run.started()).containsExactly("0@22.0", "1@32.0", "2@42.0");
        assertThat(run.done()).allSatisfy(p -> assertThat(p.note()).isNull());
    }

    @Test
    void aStallRunsThePairWhenItStillFitsAndSkipsItWhenItCannot() throws Exception {
        // Waiting for round 1 (40 s), at 37 s the machine stalls for 8 s: h0 wakes at 45 s, 5 s late. A 3 s pair
        // still ends by 48 s, the slot's end less the slack; a 4 s one cannot.
        TwoClocks host = new TwoClocks(T0.minusSeconds(30)).at(37, 0, 8_000);
        H0Run run = runH0(host, H0_EVERY_ROUND, 3, 3);
        assertThat(run.started()).containsExactly("0@30.0", "1@45.0", "2@50.0");
        assertThat(run.done()).allSatisfy(p -> assertThat(p.status()).isEqualTo(MeshResult.COMPLETE));
        assertThat(run.done().get(1).note()).isEqualTo("started late: its slot began 5.0s before this host was free "
            + "(it woke 5.0s late from its wait for the slot: the machine stalled)");
        assertThat(run.done().get(1).clockStepMs()).as("both clocks moved: no step").isNull();

        // The same stall, the wall clock stepping 8 s as well, and a pair planned at 4 s: skipped, saying both.
        H0Run tighter = runH0(new TwoClocks(T0.minusSeconds(30)).at(37, 8_000, 8_000), H0_EVERY_ROUND, 4, 3);
        assertThat(tighter.started()).containsExactly("0@30.0", "2@50.0");
        assertThat(tighter.done().get(1).status()).isEqualTo(MeshResult.SKIPPED);
        assertThat(tighter.done().get(1).clockStepMs()).isEqualTo(8_000);
        assertThat(tighter.done().get(1).error()).isEqualTo("its slot began 5.0s before this host was free (it woke "
            + "5.0s late from its wait for the slot: the machine stalled), and its planned 4.0s no longer fit in the "
            + "3.0s left before the slot's end less the slack; a longer --slot avoids it; this host's wall clock has "
            + "stepped +8.0s since round 0 began; the rounds keep to the monotonic clock");
    }

    @Test
    void aStoppedMeshSkipsWhatHasNotBegun() throws Exception {
        TwoClocks host = new TwoClocks(T0);
        List<List<MeshPairs.Link>> rounds = MeshSchedule.rounds(MeshPairs.select(hosts(3), "full", null, 0), 0);
        MeshRunner runner = new MeshRunner(rounds, Set.of("h0", "h1", "h2"), null, 0, 0, 0, host.meshClock());
        List<MeshResult.Pair> done = runner.run((p, slot) -> {
            runner.requestStop();
            return new MeshResult.Pair(p.source(), p.target(), p.round(), MeshResult.COMPLETE, null, null, null,
                null, null, null, null);
        }, round -> { });
        assertThat(done).hasSize(6);
        assertThat(done.get(0).status()).isEqualTo(MeshResult.COMPLETE);
        assertThat(done.subList(1, 6)).allSatisfy(p -> assertThat(p.status()).isEqualTo(MeshResult.SKIPPED));
    }

    @Test
    void aStopEndsAWaitForALaterSlotWithinASecond() throws Exception {
        TwoClocks host = new TwoClocks(T0.minusSeconds(3600));
        MeshRunner[] runner = new MeshRunner[1];
        runner[0] = new MeshRunner(H0_EVERY_ROUND, Set.of("h0"), T0, 10_000, 2_000, 4_000,
            new MeshClock(host, () -> host.monoNs, ns -> {
                host.advanceNs(ns);
                if (host.monoNs >= 5_000_000_000L) {
                    runner[0].requestStop(); // Ctrl-C five seconds into the hour's wait
                }
            }));
        List<MeshResult.Pair> done = runner[0].run((p, slot) -> {
            throw new AssertionError("no pair runs");
        }, round -> { });
        assertThat(host.monoNs).isEqualTo(5_000_000_000L);
        assertThat(done).hasSize(3).allSatisfy(p -> assertThat(p.error())
            .isEqualTo("the mesh was stopped before it began"));
    }
}
