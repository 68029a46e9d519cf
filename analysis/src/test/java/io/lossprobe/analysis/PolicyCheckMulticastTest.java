package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code check} on a real multicast run (sample-multicast.json: 198.18.0.102 lost 0.89 %, the others nothing): the
 * policy judges the step's figures, the worst receiver's, and every line names that receiver.
 */
class PolicyCheckMulticastTest {
    @TempDir
    Path dir;

    /** The line of the loss limit of {@code policy} on the sample, and whether the check passed. */
    private void assertLossLine(String limit, boolean passes, String line) throws Exception {
        CheckReport report = new PolicyCheck(Policy.read(Files.writeString(dir.resolve("p.json"),
            "{\"defaults\":{\"maxLossPercent\":" + limit + "}}"))).check(ReceiverMatrixTest.sample(), Optional.empty());
        assertThat(report.passed()).isEqualTo(passes);
        assertThat(report.evaluations()).filteredOn(e -> e.metric().equals("maxLossPercent"))
            .extracting(CheckReport.Evaluation::message).containsExactly(line);
        assertThat(report.failures()).hasSize(passes ? 0 : 1);
    }

    @Test
    void theWorstReceiverBreaksTheLimitAndItsFailureNamesIt() throws Exception {
        assertLossLine("0.5", false,
            "udp 20k maxLossPercent: 0.8900% > limit 0.5000% (multicast: worst receiver 198.18.0.102 of 3)");
    }

    @Test
    void aLimitTheWorstReceiverHoldsHoldsForEveryReceiver() throws Exception {
        assertLossLine("0.9", true,
            "udp 20k maxLossPercent: 0.8900% <= limit 0.9000% (multicast: worst receiver 198.18.0.102 of 3)");
    }
}
