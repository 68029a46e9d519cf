package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.Counts;
import java.util.List;

/**
 * The identities docs/multicast.md states for the union over receivers, against the receivers' own counts: exact
 * sums, and the bounds the receivers' losses put on the union and intersection. Shared by the engine's tests and the
 * lab's (probe-core's test jar).
 */
public final class UnionIdentities {
    private UnionIdentities() {
    }

    public static void check(long sent, long allReceived, long anyReceived, long anywhere, long atAll, long atSome,
                             List<Counts> receivers) {
        assertThat(allReceived + anywhere).as("allReceived + lostAnywhere == sent").isEqualTo(sent);
        assertThat(anyReceived + atAll).as("anyReceived + lostAtAll == sent").isEqualTo(sent);
        assertThat(atAll + atSome).as("lostAtAll + lostAtSome == lostAnywhere").isEqualTo(anywhere);
        long sum = 0;
        for (Counts c : receivers) {
            assertThat(c.sent()).isEqualTo(sent);
            assertThat(atAll).as("lostAtAll <= lost_i").isLessThanOrEqualTo(c.lost());
            assertThat(anywhere).as("lost_i <= lostAnywhere").isGreaterThanOrEqualTo(c.lost());
            assertThat(allReceived).as("allReceived <= received_i").isLessThanOrEqualTo(c.received());
            assertThat(anyReceived).as("received_i <= anyReceived").isGreaterThanOrEqualTo(c.received());
            sum += c.lost();
        }
        assertThat(anywhere).as("lostAnywhere <= min(sent, sum lost_i)").isLessThanOrEqualTo(Math.min(sent, sum));
    }
}
