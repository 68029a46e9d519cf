package io.lossprobe.core.accounting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The range algebra behind the union over a multicast step's receivers: each set's ranges against a bit per
 * number, the union's and intersection's sizes against the same bits OR-ed and AND-ed, and the identities
 * docs/multicast.md states between them and the receivers' own counts.
 */
class LostSetTest {
    /** A random set over [0, universe) as bits, and the same as a LostSet built the tracker's way. */
    private record Sample(BitSet bits, LostSet set) {
    }

    private static Sample sample(Random random, int universe, double lossRate, double burstiness) {
        BitSet bits = new BitSet(universe);
        boolean losing = false;
        for (int n = 0; n < universe; n++) {
            losing = losing ? random.nextDouble() < burstiness : random.nextDouble() < lossRate;
            bits.set(n, losing);
        }
        LostSet.Builder b = new LostSet.Builder();
        // Added in increasing pieces that sometimes touch (the tracker finalises word by word): the builder merges.
        for (int n = bits.nextSetBit(0); n >= 0; n = bits.nextSetBit(n + 1)) {
            b.add(n, n + 1);
        }
        return new Sample(bits, b.build());
    }

    @Test
    void aSetHoldsExactlyItsNumbersInMaximalRanges() {
        Random random = new Random(11);
        for (int trial = 0; trial < 300; trial++) {
            Sample s = sample(random, 1 + random.nextInt(3000), random.nextDouble() * 0.2, random.nextDouble());
            long[] pairs = s.set().pairs();
            BitSet fromRanges = new BitSet();
            for (int i = 0; i < pairs.length; i += 2) {
                fromRanges.set((int) pairs[i], (int) pairs[i + 1]);
                if (i > 0) {
                    assertThat(pairs[i]).as("a gap between ranges").isGreaterThan(pairs[i - 1]);
                }
            }
            assertThat(fromRanges).isEqualTo(s.bits());
            assertThat(s.set().count()).isEqualTo(s.bits().cardinality());
            assertThat(LostSet.of(pairs, 3000)).isEqualTo(s.set());
        }
    }

    @Test
    void unionAndIntersectionAreTheSizesOfTheBitsOredAndAndedAndObeyTheIdentities() {
        Random random = new Random(23);
        int differentCounts = 0;
        for (int trial = 0; trial < 500; trial++) {
            int universe = 1 + random.nextInt(2000);
            int receivers = 1 + random.nextInt(5);
            // Some loss shared by all (before the fan-out), some each receiver's own.
            Sample common = sample(random, universe, random.nextDouble() * 0.05, random.nextDouble() * 0.8);
            List<LostSet> sets = new ArrayList<>();
            BitSet union = new BitSet();
            BitSet intersection = new BitSet();
            intersection.set(0, universe);
            long min = Long.MAX_VALUE;
            long max = 0;
            long sum = 0;
            for (int r = 0; r < receivers; r++) {
                Sample own = sample(random, universe, random.nextDouble() * 0.1, random.nextDouble() * 0.8);
                BitSet bits = (BitSet) own.bits().clone();
                bits.or(common.bits());
                LostSet set = LostSet.of(pairsOf(bits), universe);
                sets.add(set);
                union.or(bits);
                intersection.and(bits);
                min = Math.min(min, set.count());
                max = Math.max(max, set.count());
                sum += set.count();
            }
            LostSet.Overlap o = LostSet.overlap(sets);
            assertThat(o.anywhere()).as("|union|").isEqualTo(union.cardinality());
            assertThat(o.atAll()).as("|intersection|").isEqualTo(intersection.cardinality());
            assertThat(o.atAll()).as("lostAtAll <= min lost_i").isLessThanOrEqualTo(min);
            assertThat(o.anywhere()).as("max lost_i <= lostAnywhere").isGreaterThanOrEqualTo(max);
            assertThat(o.anywhere()).as("lostAnywhere <= min(sent, sum lost_i)")
                .isLessThanOrEqualTo(Math.min(universe, sum));
            assertThat(o.atAll()).as("common loss is lost at all").isGreaterThanOrEqualTo(common.bits().cardinality());
            if (receivers == 2) {
                assertThat(o.anywhere() + o.atAll()).as("two receivers: inclusion-exclusion").isEqualTo(sum);
            }
            if (receivers == 1) {
                assertThat(o.anywhere()).isEqualTo(o.atAll()).isEqualTo(sum);
            }
            if (o.anywhere() != o.atAll()) {
                differentCounts++;
            }
        }
        assertThat(differentCounts).as("trials where the receivers lost differently").isGreaterThan(200);
    }

    private static long[] pairsOf(BitSet bits) {
        List<Long> out = new ArrayList<>();
        int n = bits.nextSetBit(0);
        while (n >= 0) {
            int end = bits.nextClearBit(n);
            out.add((long) n);
            out.add((long) end);
            n = bits.nextSetBit(end);
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    @Test
    void hugeRangesCountWithoutOverflowAndEmptySetsOverlapInNothing() {
        long big = 1L << 61;
        LostSet a = LostSet.of(new long[] {0, big, big + 10, big + 20}, Long.MAX_VALUE);
        LostSet b = LostSet.of(new long[] {big - 5, big + 15}, Long.MAX_VALUE);
        assertThat(LostSet.overlap(List.of(a, b))).isEqualTo(new LostSet.Overlap(big + 20, 5 + 5));
        assertThat(LostSet.overlap(List.of(a, LostSet.EMPTY))).isEqualTo(new LostSet.Overlap(a.count(), 0));
        assertThat(LostSet.overlap(List.of(LostSet.EMPTY))).isEqualTo(new LostSet.Overlap(0, 0));
    }

    @Test
    void pastTheBoundTheSetIsUnknownNeverPartial() {
        LostSet.Builder b = new LostSet.Builder();
        for (int i = 0; i < LostSet.MAX_RANGES; i++) {
            b.add(2L * i, 2L * i + 1);
        }
        LostSet full = b.build();
        assertThat(full.known()).isTrue();
        assertThat(full.ranges()).isEqualTo(LostSet.MAX_RANGES);
        b.add(2L * LostSet.MAX_RANGES - 1, 2L * LostSet.MAX_RANGES + 3); // touches the last: merged, still known
        assertThat(b.build().ranges()).isEqualTo(LostSet.MAX_RANGES);
        b.add(2L * LostSet.MAX_RANGES + 5, 2L * LostSet.MAX_RANGES + 6);
        assertThat(b.build()).isEqualTo(LostSet.UNKNOWN);
        assertThat(b.build().count()).isEqualTo(-1);
        assertThat(b.build().pairs()).isNull();
        b.add(1L << 40, (1L << 40) + 1);
        assertThat(b.build().known()).isFalse();
        assertThatThrownBy(() -> LostSet.overlap(List.of(full, LostSet.UNKNOWN)))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void ofRefusesWhatNoTrackerBuilds() {
        long[][] bad = {{1}, {-1, 2}, {3, 3}, {5, 4}, {0, 2, 2, 4}, {0, 4, 2, 6}, {4, 6, 0, 2}, {0, 11}};
        for (long[] pairs : bad) {
            assertThatThrownBy(() -> LostSet.of(pairs, 10)).as(java.util.Arrays.toString(pairs))
                .isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> LostSet.of(new long[2 * LostSet.MAX_RANGES + 2], Long.MAX_VALUE))
            .hasMessageContaining("more than");
        assertThat(LostSet.of(new long[] {0, 2, 3, 10}, 10).count()).isEqualTo(9);
    }
}
