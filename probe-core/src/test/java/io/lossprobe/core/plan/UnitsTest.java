package io.lossprobe.core.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class UnitsTest {
    @Test
    void ratesUseDecimalSuffixes() {
        assertThat(Level.parse("30k").ratePerSecond()).isEqualTo(30_000);
        assertThat(Level.parse("2.5M").ratePerSecond()).isEqualTo(2_500_000);
        assertThat(Level.parse("1G").ratePerSecond()).isEqualTo(1_000_000_000);
        assertThat(Level.parse("100000").ratePerSecond()).isEqualTo(100_000);
        assertThat(Level.parse("max").isMax()).isTrue();
        assertThat(Level.parse("2.5M").toString()).isEqualTo("2.5M");
        assertThat(Level.parse("30k").toString()).isEqualTo("30k");
        assertThat(Level.parse("12345").toString()).isEqualTo("12345");
    }

    @Test
    void badRatesAreRefusedWithAReadableMessage() {
        assertThatThrownBy(() -> Level.parse("abc")).hasMessageContaining("'abc'");
        assertThatThrownBy(() -> Level.parse("0")).hasMessageContaining("positive");
        assertThatThrownBy(() -> Level.parse("-5k")).hasMessageContaining("positive");
        assertThatThrownBy(() -> Level.parse("1.5")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Level.parse("")).hasMessageContaining("empty");
        assertThatThrownBy(() -> Level.parse("9223372036854776k")).hasMessageContaining("too large");
        assertThatThrownBy(() -> Level.parse("1e999999999G")).hasMessageContaining("too large");
    }

    @Test
    void durationsAndSizes() {
        assertThat(Units.parseDurationNs("5s", "d")).isEqualTo(5_000_000_000L);
        assertThat(Units.parseDurationNs("250ms", "d")).isEqualTo(250_000_000L);
        assertThat(Units.parseDurationNs("2m", "d")).isEqualTo(120_000_000_000L);
        assertThat(Units.parseDurationNs("1.5", "d")).isEqualTo(1_500_000_000L);
        assertThat(Units.parseDurationNs("0", "d")).isZero();
        assertThatThrownBy(() -> Units.parseDurationNs("soon", "--duration")).hasMessageStartingWith("--duration");
        assertThat(Units.parseBytes("64", "s")).isEqualTo(64);
        assertThat(Units.parseBytes("1KiB", "s")).isEqualTo(1024);
        assertThat(Units.parseBytes("4MiB", "s")).isEqualTo(4 << 20);
        assertThatThrownBy(() -> Units.parseBytes("big", "--size")).hasMessageStartingWith("--size");
    }

    @Test
    void durationsAndSizesRefuseOverflowInsteadOfWrapping() {
        // 2^64 + 1 ns once became 1 ns: a step too short to lose anything passed a loss-only policy.
        assertThatThrownBy(() -> Units.parseDurationNs("18446744073709551617ns", "--duration"))
            .hasMessage("--duration is too long: '18446744073709551617ns'");
        assertThatThrownBy(() -> Units.parseDurationNs("9223372036854775808ns", "d")).hasMessageContaining("too long");
        assertThatThrownBy(() -> Units.parseDurationNs("1e999999999h", "d")).hasMessageContaining("too long");
        assertThat(Units.parseDurationNs("9223372036854775807ns", "d")).isEqualTo(Long.MAX_VALUE);
        assertThat(Units.parseDurationNs("1e-999999999s", "d")).isZero();
        assertThat(Units.parseDurationNs("1.5ns", "d")).isEqualTo(2);
        assertThat(Units.parseDurationNs("0.5us", "d")).isEqualTo(500);

        assertThatThrownBy(() -> Units.parseBytes("9223372036854775808", "--size")).hasMessageContaining("too large");
        assertThatThrownBy(() -> Units.parseBytes("9007199254740992KiB", "--size")).hasMessageContaining("too large");
        assertThat(Units.parseBytes("9007199254740991KiB", "s")).isEqualTo(9007199254740991L * 1024);
        assertThatThrownBy(() -> Units.parseBytes("-1", "--size")).hasMessageContaining("must not be negative");
        assertThat(Units.parseBytes("0", "s")).isZero(); // the caller's range says whether 0 will do
        assertThatThrownBy(() -> Units.parseBytes("1.5KiB", "--size")).hasMessageContaining("not a size");
    }

    @Test
    void planBoundsEveryPhaseSoNoDeadlineOverflows() {
        List<Level> levels = List.of(Level.parse("30k"));
        long s = 1_000_000_000L;
        long day = Plan.MAX_PHASE_NS;
        assertThatThrownBy(() -> new Plan(List.of("udp"), 48, 40000, levels, s, day + 1, s, 64, "127.0.0.1"))
            .hasMessageContaining("--warmup must be at most 24h");
        assertThatThrownBy(() -> new Plan(List.of("udp"), 48, 40000, levels, s, 0, Long.MAX_VALUE, 64, "127.0.0.1"))
            .hasMessageContaining("--drain must be at most 24h");
        Plan longest = new Plan(List.of("udp"), 48, 40000, levels, day, day, day, 64, "127.0.0.1");
        assertThat(longest.warmupNs() + longest.durationNs() + longest.drainNs()).isLessThan(Long.MAX_VALUE / 2);
    }

    @Test
    void planRefusesWhatCannotRun() {
        List<Level> levels = List.of(Level.parse("30k"));
        long s = 1_000_000_000L;
        assertThatThrownBy(() -> new Plan(List.of("udp"), 0, 40000, levels, s, 0, s, 64, "127.0.0.1"))
            .hasMessageContaining("--ports");
        assertThatThrownBy(() -> new Plan(List.of("udp"), 48, 65500, levels, s, 0, s, 64, "127.0.0.1"))
            .hasMessageContaining("past port 65535");
        assertThatThrownBy(() -> new Plan(List.of("udp"), 48, 40000, levels, 0, 0, s, 64, "127.0.0.1"))
            .hasMessageContaining("--duration");
        assertThatThrownBy(() -> new Plan(List.of("udp"), 48, 40000, levels, s, 0, s, 47, "127.0.0.1"))
            .hasMessageContaining("48-byte header");
        assertThatThrownBy(() -> new Plan(List.of("udp"), 48, 40000, List.of(Level.of(10)), s, 0, s, 64,
            "127.0.0.1")).hasMessageContaining("one message per second per port");
        Plan ok = new Plan(List.of("udp"), 48, 40000, levels, s, 0, s, 48, "127.0.0.1");
        assertThat(ok.port(47)).isEqualTo(40047);
    }
}
