package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A multicast publication's view of its receivers from their status messages: the one whose position is lowest
 * while they disagree is counted, with how far at most it was behind the one furthest ahead, per epoch.
 */
class StatusWatchTest {
    private static final int TERM = 64 * 1024;

    @Test
    void theLowestReceiverIsCountedWithHowFarItWasBehind() throws Exception {
        InetAddress a = InetAddress.getByName("198.18.0.101");
        InetAddress b = InetAddress.getByName("198.18.0.102");
        InetAddress c = InetAddress.getByName("198.18.0.103");
        DatagramCounts.StatusWatch watch = new DatagramCounts.StatusWatch(5, TERM);
        watch.newEpoch();
        watch.onStatus(a, 7, 0, 32_768); // alone: nobody disagrees
        watch.onStatus(b, 7, 0, 32_768); // equal: nobody is lowest
        watch.onStatus(c, 7, 0, 32_768);
        watch.onStatus(a, 7, 40_000, 32_768); // b and c behind by 40,000; b is found first
        watch.onStatus(c, 7, 41_000, 32_768); // b lowest, 41,000 behind c
        watch.onStatus(b, 7, 10_000, 32_768); // b lowest, 31,000 behind
        watch.onStatus(a, 8, 100, 32_768); // the next term: b is TERM + 100 - 10,000 behind
        List<InetAddress> who = new ArrayList<>();
        List<long[]> v = watch.snapshot(who);
        assertThat(who).containsExactly(a, b, c);
        assertThat(v.get(0)).containsExactly(3, 0, 0, 32_768);
        assertThat(v.get(1)).containsExactly(2, 4, TERM + 100 - 10_000, 32_768);
        assertThat(v.get(2)).containsExactly(2, 0, 0, 32_768);
        watch.newEpoch(); // a new step: how far behind starts again, the counts go on
        assertThat(watch.snapshot(new ArrayList<>()).get(1)).containsExactly(2, 4, 0, 32_768);
    }
}
