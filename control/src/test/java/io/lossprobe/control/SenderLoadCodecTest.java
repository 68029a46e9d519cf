package io.lossprobe.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.engine.SenderLoad;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A reverse run's sender load crosses the control channel inside the counters and comes out of them whole. */
class SenderLoadCodecTest {
    @Test
    void theLoadRoundTripsAndLeavesTheTransportsCountersAsTheyWere() throws Exception {
        SenderLoad load = new SenderLoad(1_000_000_000L, 412_000_000L, 80_000_000L, 30_000_000L, 0, 0);
        Map<String, Long> sent = SenderLoadCodec.encode(Map.of("udp.sendCalls", 7L), load);
        Reply.SendOutcome wire = (Reply.SendOutcome) Codec.reply(Codec.encode(new Reply.SendOutcome(
            new long[][] {{1, 1, 0, 0}}, 1, 0, Map.of(), new Reply.Lag(0, 0, 0, 0, 0, 0, 0, 0), sent, Map.of(),
            java.util.List.of())));
        Map<String, Long> counters = new HashMap<>(wire.counters());
        assertThat(SenderLoadCodec.decode(counters)).isEqualTo(load);
        assertThat(counters).isEqualTo(Map.of("udp.sendCalls", 7L));
        SenderLoad bursts = new SenderLoad(1_000_000_000L, null, null, 3, 0, 0, 100L, 6_400L, 64L);
        assertThat(SenderLoadCodec.decode(new HashMap<>(SenderLoadCodec.encode(Map.of(), bursts)))).isEqualTo(bursts);
    }

    @Test
    void unreadableThreadTimesStayUnknownAndAServerSendingNoLoadGivesNone() {
        SenderLoad noTimes = new SenderLoad(5, null, null, 3, 2, 1);
        assertThat(SenderLoadCodec.decode(new HashMap<>(SenderLoadCodec.encode(Map.of(), noTimes))))
            .isEqualTo(noTimes);
        assertThat(SenderLoadCodec.decode(new HashMap<>(Map.of("udp.sendCalls", 7L)))).isNull();
    }
}
