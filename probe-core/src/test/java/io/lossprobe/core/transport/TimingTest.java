package io.lossprobe.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class TimingTest {
    private static Transport declaring(boolean timing) {
        return timing ? TransportOptionsTest.declaring("t", Timing.OPTION) : TransportOptionsTest.declaring("t");
    }

    @Test
    void aTransportRunsTheModeItDeclaresAndDefaultOtherwise() {
        Map<String, String> precise = Map.of(Timing.KEY, "precision");
        assertThat(Timing.modeOf(declaring(true), precise)).isEqualTo(Timing.PRECISION);
        assertThat(Timing.modeOf(declaring(true), Map.of())).isEqualTo(Timing.DEFAULT);
        assertThat(Timing.modeOf(declaring(false), precise)).as("not honoured, so not claimed")
            .isEqualTo(Timing.DEFAULT);
        assertThatThrownBy(() -> Timing.OPTION.parse("fast")).hasMessageContaining("default, precision");
    }

    @Test
    void aFiguresSourceIsKernelOnlyWhenEveryArrivalWasStamped() {
        assertThat(Timing.sourceOf(0, 0)).isNull();
        assertThat(Timing.sourceOf(0, 5)).isEqualTo(Timing.SOURCE_USER);
        assertThat(Timing.sourceOf(5, 5)).isEqualTo(Timing.SOURCE_KERNEL);
        assertThat(Timing.sourceOf(4, 5)).isEqualTo(Timing.SOURCE_MIXED);
    }
}
