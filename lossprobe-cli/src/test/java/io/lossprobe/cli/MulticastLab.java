package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.ReceiverResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What the multicast lab tests share: the lab with its receivers and their serves, and the per-receiver checks. */
final class MulticastLab {
    private MulticastLab() {
    }

    /**
     * The lab of prefix {@code prefixVariable} (default {@code defaultPrefix}) with one sender, {@code receivers}
     * multicast receivers ({@code lab.sh mcast}) and a {@code lossprobe serve} on each, bound to its address, sharing
     * the new secret {@code secret}; skipped where the lab cannot run ({@link Lab#assumed}).
     */
    static Lab up(String prefixVariable, String defaultPrefix, int receivers, Path secret) throws Exception {
        Lab lab = Lab.assumed(prefixVariable, defaultPrefix);
        assertThat(lab.run("up", "1").exit()).isZero();
        Lab.Exec mcast = lab.run("mcast", Integer.toString(receivers));
        assertThat(mcast.exit()).as(mcast.output()).isZero();
        io.lossprobe.control.Auth.writeNewSecret(secret);
        List<Map.Entry<String, String>> serves = new ArrayList<>();
        for (int i = 1; i <= receivers; i++) {
            serves.add(Map.entry("mr" + i, receiver(i)));
        }
        lab.serveOn(secret, serves);
        return lab;
    }

    /** Receiver {@code i}'s address (lp-mrI). */
    static String receiver(int i) {
        return "198.18.0." + (100 + i);
    }

    /**
     * The identities of the measurement contract that can fail, for one receiver and each of its {@code flows}
     * flows, and nothing foreign, corrupt or duplicated.
     */
    static void exact(ReceiverResult rx, int flows) {
        List<Counts> all = new ArrayList<>(List.of(rx.counts()));
        rx.flows().stream().map(FlowResult::counts).forEach(all::add);
        for (Counts c : all) {
            assertThat(c.received() + c.lost()).as("%s received + lost", rx.receiver()).isEqualTo(c.sent());
            assertThat(c.lostInRuns()).as("%s lostInRuns", rx.receiver()).isEqualTo(c.lost());
            assertThat(c.lossEvents() == 0).as("%s lossEvents 0 exactly when lost 0", rx.receiver())
                .isEqualTo(c.lost() == 0);
            assertThat(c.received()).isLessThanOrEqualTo(c.sent());
            assertThat(c.foreign()).as("%s foreign", rx.receiver()).isZero();
            assertThat(c.corrupt()).as("%s corrupt", rx.receiver()).isZero();
            assertThat(c.duplicates()).as("%s duplicates", rx.receiver()).isZero();
        }
        assertThat(rx.flows()).hasSize(flows);
    }
}
