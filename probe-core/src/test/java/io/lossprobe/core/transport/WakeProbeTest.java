package io.lossprobe.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WakeProbeTest {
    @Test
    void aSleepingThreadWakesNoEarlierThanAsked() {
        Map<String, Long> env = new HashMap<>();
        WakeProbe.measure(20, 50_000, env);
        // lateness is measured past the sleep asked for: never negative, and the median not above the worst
        assertThat(env.get(WakeProbe.LATE_P50_NS)).isNotNegative().isLessThanOrEqualTo(env.get(WakeProbe.LATE_P99_NS));
        assertThat(env).containsKey(WakeProbe.CPU_NS);
    }

    @Test
    void aDelayNearTheFloorIsNotedInTheDefaultTimingOnly() {
        Map<String, Long> env = Map.of(WakeProbe.LATE_P50_NS, 48_000L, WakeProbe.CPU_NS, 45_000L);
        assertThat(WakeProbe.nearFloor(env, 54_000, "default")).isEqualTo("delay p50 54 us is within 2x of how "
            + "late this host's timers wake a sleeping thread (48 us at the median, measured as the sender opened, "
            + "each wake-up costing it 45 us of CPU): that much of it is the host's, not the path's; --timing "
            + "precision spins instead of sleeping");
        assertThat(WakeProbe.nearFloor(env, 96_000, "default")).isNotNull();
        assertThat(WakeProbe.nearFloor(env, 96_001, "default")).as("more than twice the floor").isNull();
        assertThat(WakeProbe.nearFloor(env, 54_000, "precision")).as("the precision mode does not sleep").isNull();
        assertThat(WakeProbe.nearFloor(Map.of(), 54_000, "default")).as("no floor measured").isNull();
        assertThat(WakeProbe.nearFloor(null, 54_000, "default")).isNull();
    }
}
