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
        assertThat(MeshHosts.resolve("localhost:7401")).isNotEmpty()
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

    /** A clock that moves only when the runner waits or a pair runs. */
    private static final class VirtualClock extends Clock {
        Instant now;

        VirtualClock(Instant start) {
            now = start;
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
            return now;
        }
    }

    @Test
    void onTheClockEachPairStartsAtItsSlotAndOneThatWouldStartLateIsSkipped() throws Exception {
        Instant t0 = Instant.parse("2026-12-01T03:05:00Z");
        VirtualClock clock = new VirtualClock(t0.minusSeconds(30));
        // h0 sends in every round; others' pairs run on their own hosts.
        List<List<MeshPairs.Link>> rounds = List.of(
            List.of(new MeshPairs.Link("h0", "h1"), new MeshPairs.Link("h2", "h3")),
            List.of(new MeshPairs.Link("h0", "h2"), new MeshPairs.Link("h1", "h3")),
            List.of(new MeshPairs.Link("h0", "h3"), new MeshPairs.Link("h2", "h1")),
            List.of(new MeshPairs.Link("h2", "h0")),
            List.of(new MeshPairs.Link("h0", "h1")));
        MeshRunner runner = new MeshRunner(rounds, Set.of("h0"), t0, 10_000, 2_000, clock, when -> {
            if (when.isAfter(clock.now)) {
                clock.now = when;
            }
        });
        List<String> started = new ArrayList<>();
        List<MeshResult.Pair> done = runner.run((p, slotStart) -> {
            started.add(p.round() + "@" + clock.now);
            assertThat(slotStart).isEqualTo(t0.plusSeconds(10L * p.round()));
            // The pair in round 1 runs 3 s past its slot; the next one would begin 3 s late and is skipped.
            clock.now = clock.now.plusSeconds(p.round() == 1 ? 13 : 4);
            return new MeshResult.Pair(p.source(), p.target(), p.round(), MeshResult.COMPLETE, null, null, null,
                null, null);
        }, round -> { });
        assertThat(done).extracting(MeshResult.Pair::round).containsExactly(0, 1, 2, 4);
        assertThat(started).containsExactly("0@2026-12-01T03:05:00Z", "1@2026-12-01T03:05:10Z",
            "4@2026-12-01T03:05:40Z");
        MeshResult.Pair skipped = done.get(2);
        assertThat(skipped.status()).isEqualTo(MeshResult.SKIPPED);
        assertThat(skipped.error()).contains("its slot began 3.0s before this host was free");
    }

    @Test
    void aStoppedMeshSkipsWhatHasNotBegun() throws Exception {
        VirtualClock clock = new VirtualClock(Instant.parse("2026-12-01T03:05:00Z"));
        List<List<MeshPairs.Link>> rounds = MeshSchedule.rounds(MeshPairs.select(hosts(3), "full", null, 0), 0);
        MeshRunner runner = new MeshRunner(rounds, Set.of("h0", "h1", "h2"), null, 0, 0, clock, when -> { });
        List<MeshResult.Pair> done = runner.run((p, slotStart) -> {
            runner.requestStop();
            return new MeshResult.Pair(p.source(), p.target(), p.round(), MeshResult.COMPLETE, null, null, null,
                null, null);
        }, round -> { });
        assertThat(done).hasSize(6);
        assertThat(done.get(0).status()).isEqualTo(MeshResult.COMPLETE);
        assertThat(done.subList(1, 6)).allSatisfy(p -> assertThat(p.status()).isEqualTo(MeshResult.SKIPPED));
    }
}
