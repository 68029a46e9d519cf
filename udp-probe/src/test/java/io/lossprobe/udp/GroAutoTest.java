package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.plan.Level;
import io.lossprobe.netty.NettyIo;
import org.junit.jupiter.api.Test;

/** {@code udp.gro=auto}'s rule: UDP_GRO from half a message per flow and send cycle, or at max. */
class GroAutoTest {
    private static final long CYCLE_NS = UdpSender.DEFAULT_MIN_CYCLE_NS;

    @Test
    void paysFromHalfAMessagePerFlowAndCycle() {
        assertThat(CYCLE_NS).isEqualTo(50_000); // the figures below are for the default 50 us cycle
        assertThat(UdpReceiveSettings.groPays(48, Level.parse("1M"), CYCLE_NS)).as("20.8k/s a flow").isTrue();
        assertThat(UdpReceiveSettings.groPays(48, Level.parse("480k"), CYCLE_NS)).as("10k/s a flow").isTrue();
        assertThat(UdpReceiveSettings.groPays(48, Level.parse("479k"), CYCLE_NS)).as("9,979/s a flow").isFalse();
        assertThat(UdpReceiveSettings.groPays(48, Level.parse("100k"), CYCLE_NS)).isFalse();
        assertThat(UdpReceiveSettings.groPays(1, Level.parse("30k"), CYCLE_NS))
            .as("1.5 messages a cycle: the sender keeps no minimum cycle, each message leaves alone").isFalse();
        assertThat(UdpReceiveSettings.groPays(1, Level.parse("40k"), CYCLE_NS)).isTrue();
        assertThat(UdpReceiveSettings.groPays(48, Level.MAX, CYCLE_NS)).isTrue();
        assertThat(UdpReceiveSettings.groPays(48, Level.parse("1M"), 200_000)).as("a longer cycle batches more")
            .isTrue();
        assertThat(UdpReceiveSettings.groPays(48, Level.parse("200k"), 200_000)).isTrue();
        assertThat(UdpReceiveSettings.groPays(48, Level.parse("1M"), 0)).as("no minimum cycle: only when behind")
            .isFalse();
    }

    @Test
    void theOptionTakesAutoOnOffAndRefusesTheRest() {
        assertThat(UdpReceiveSettings.groOption(NettyIo.NIO, "auto")).isEqualTo("auto");
        assertThat(UdpReceiveSettings.groOption(NettyIo.NIO, "OFF")).isEqualTo("off");
        assertThat(UdpReceiveSettings.groOption(NettyIo.NIO, "false")).isEqualTo("off");
        assertThat(UdpReceiveSettings.groOption(NettyIo.EPOLL, "true")).isEqualTo("on");
        assertThatThrownBy(() -> UdpReceiveSettings.groOption(NettyIo.NIO, "on")).hasMessageContaining("native epoll");
        assertThatThrownBy(() -> UdpReceiveSettings.groOption(NettyIo.EPOLL, "maybe"))
            .hasMessage("udp.gro must be auto, on or off, not 'maybe'");
    }
}
