package io.lossprobe.core.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** A punch names its flow only under its own run, pass and key, whole and unaltered. */
class PunchTest {
    private final MessageAuth run = MessageAuth.random();
    private final MessageAuth pass = run.forPass("udp", 64);
    private final Punch punch = new Punch(pass, 9, 4);

    @Test
    void eachFlowsPunchNamesThatFlow() {
        for (int f = 0; f < 4; f++) {
            byte[] p = punch.encode(f);
            assertThat(p).hasSize(Punch.BYTES);
            assertThat(punch.flowOf(p, 0, p.length)).isEqualTo(f);
        }
        byte[] inside = new byte[40];
        System.arraycopy(punch.encode(2), 0, inside, 7, Punch.BYTES);
        assertThat(punch.flowOf(inside, 7, Punch.BYTES)).isEqualTo(2);
        assertThatThrownBy(() -> punch.encode(4)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anythingElseIsNoPunch() {
        byte[] good = punch.encode(1);
        assertThat(new Punch(pass, 10, 4).flowOf(good, 0, good.length)).as("another run").isEqualTo(-1);
        assertThat(new Punch(run.forPass("udp", 128), 9, 4).flowOf(good, 0, good.length)).as("another pass")
            .isEqualTo(-1);
        assertThat(new Punch(MessageAuth.random().forPass("udp", 64), 9, 4).flowOf(good, 0, good.length))
            .as("another key").isEqualTo(-1);
        assertThat(new Punch(pass, 9, 1).flowOf(good, 0, good.length)).as("a flow the pass has not").isEqualTo(-1);
        for (int i = 0; i < Punch.BYTES; i++) {
            byte[] altered = good.clone();
            altered[i] ^= 0x10;
            assertThat(punch.flowOf(altered, 0, altered.length)).as("byte %d altered", i).isEqualTo(-1);
        }
        assertThat(punch.flowOf(Arrays.copyOf(good, Punch.BYTES + 1), 0, Punch.BYTES + 1)).isEqualTo(-1);
        assertThat(punch.flowOf(good, 0, Punch.BYTES - 1)).isEqualTo(-1);
        assertThat(punch.flowOf(good, 1, Punch.BYTES)).as("runs past the array").isEqualTo(-1);
        assertThat(punch.flowOf(good, -1, Punch.BYTES)).isEqualTo(-1);
        assertThat(punch.flowOf(new byte[Punch.BYTES], 0, Punch.BYTES)).isEqualTo(-1);
    }
}
