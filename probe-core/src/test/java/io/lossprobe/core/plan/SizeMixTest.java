package io.lossprobe.core.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code --size-mix}: what it reads, how it lays the sizes out, and how a plan carries it. */
class SizeMixTest {
    @Test
    void imixIsTheSevenFourOneMixAndReadsBackFromItsText() {
        SizeMix imix = SizeMix.parse("IMIX");
        assertThat(imix.sizes()).containsExactly(64, 570, 1518);
        assertThat(imix.weights()).containsExactly(7, 4, 1);
        assertThat(imix.period()).isEqualTo(12);
        assertThat(imix.largest()).isEqualTo(1518);
        assertThat(SizeMix.parse(imix.toString())).isEqualTo(imix);
        assertThat(SizeMix.parse(" 64:3, 1KiB:1 ").sizes()).containsExactly(64, 1024);
        assertThat(SizeMix.parse(null)).isNull();
        assertThat(SizeMix.parse(" ")).isNull();
    }

    @Test
    void badMixesAreRefusedInOneLine() {
        for (String bad : List.of("64", "64:1", "32:1,64:1", "64:1,64:2", "64:0,128:1", "64:x,128:1", "64:1,,128:1",
            "64:1,70000:1", "64:9999,128:2", ":1,64:1")) {
            assertThatThrownBy(() -> SizeMix.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--size-mix").hasMessageNotContaining("\n");
        }
    }

    @Test
    void everyCycleHoldsEachSizeByItsWeightSpreadOut() {
        SizeMix imix = SizeMix.parse("imix");
        int[] layout = imix.layout();
        int[] seen = new int[3];
        for (int i : layout) {
            seen[i]++;
        }
        assertThat(seen).containsExactly(7, 4, 1);
        for (int i = 1; i < layout.length; i++) {
            assertThat(layout[i] == 2 && layout[i - 1] == 2).isFalse();
        }
        // The 570s are spread: never three in a row.
        for (int i = 2; i < layout.length; i++) {
            assertThat(layout[i] == 1 && layout[i - 1] == 1 && layout[i - 2] == 1).isFalse();
        }
    }

    @Test
    void theTableGivesEachFlowsSequenceItsSizeAndCountsRangesAsOneByOneWould() {
        SizeMix mix = SizeMix.parse("64:5,200:2,1400:3");
        SizeMix.Table t = mix.table();
        int[] layout = mix.layout();
        for (int flow = 0; flow < 5; flow++) {
            for (long seq = 0; seq < 50; seq++) {
                assertThat(t.index(flow, seq)).isEqualTo(layout[(int) ((seq + flow) % 10)]);
                assertThat(t.length(flow, seq)).isEqualTo(mix.sizes().get(t.index(flow, seq)));
            }
        }
        java.util.Random random = new java.util.Random(7);
        for (int trial = 0; trial < 200; trial++) {
            int flow = random.nextInt(48);
            long from = random.nextInt(1000);
            long to = from + random.nextInt(2000);
            long[] fast = new long[3];
            t.countRange(flow, from, to, fast);
            long[] slow = new long[3];
            for (long s = from; s < to; s++) {
                slow[t.index(flow, s)]++;
            }
            assertThat(fast).as("[%d, %d) of flow %d", from, to, flow).containsExactly(slow);
        }
    }

    @Test
    void aPlanCarriesItsMixAtTheLargestSizeAndRefusesWhatItCannotGoWith() {
        Plan base = new Plan(List.of("udp"), 2, 40000, List.of(Level.parse("1k")), 1_000_000_000L, 0, 0, 64,
            "127.0.0.1", Plan.STREAM, 0, Map.of());
        Plan mixed = base.withSizeMix("imix");
        assertThat(mixed.sizeMix()).isEqualTo(SizeMix.IMIX);
        assertThat(mixed.messageSize()).isEqualTo(1518);
        assertThat(mixed.sizes()).containsExactly(1518);
        assertThat(mixed.messageLengths()).containsExactly(64, 570, 1518);
        assertThat(mixed.withBindAddress("::1").mix()).isEqualTo(mixed.mix());
        assertThat(base.mix()).isNull();
        assertThat(base.messageLengths()).containsExactly(64);
        Plan echo = new Plan(List.of("udp"), 2, 40000, List.of(Level.parse("1k")), 1_000_000_000L, 0, 0, 64,
            "127.0.0.1", Plan.ECHO, 0, Map.of());
        assertThatThrownBy(() -> echo.withSizeMix("imix")).hasMessageContaining("--mode echo");
        Plan sizes = new Plan(List.of("udp"), 2, 40000, List.of(Level.parse("1k")), 1_000_000_000L, 0, 0, 1518,
            "127.0.0.1", Plan.STREAM, 0, Map.of(), List.of(1518, 64), null, 0);
        assertThatThrownBy(() -> new Plan(sizes.transports(), 2, 40000, sizes.levels(), sizes.durationNs(), 0, 0,
            1518, "127.0.0.1", Plan.STREAM, 0, Map.of(), List.of(1518, 64), null, 0, List.of(), null, 0, "imix"))
            .hasMessageContaining("--sizes");
    }
}
