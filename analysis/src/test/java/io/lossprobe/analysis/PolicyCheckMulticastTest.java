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

    /**
     * A step whose receiver was lost to the run fails the check even under a policy that allows any loss, and the
     * line names the receiver and why; the same file without the mark passes.
     */
    @Test
    void aStepWithAReceiverGoneFailsWhateverTheLimits() throws Exception {
        LoadedResult sample = ReceiverMatrixTest.sample();
        io.lossprobe.core.result.RunResult r = sample.run();
        io.lossprobe.core.result.StepResult s = r.steps().get(0);
        java.util.List<io.lossprobe.core.result.ReceiverResult> marked = new java.util.ArrayList<>(s.receivers());
        marked.set(2, marked.get(2).withGone("during udp step 0: peer closed the control connection"));
        io.lossprobe.core.result.RunResult gone = new io.lossprobe.core.result.RunResult(r.schemaVersion(), r.tool(),
            r.startedAt(), r.finishedAt(), r.status(), r.error(), r.environment(), r.plan(), r.counters(),
            java.util.List.of(s.withReceivers(marked, s.worstReceiver())), r.search());
        Policy any = Policy.read(Files.writeString(dir.resolve("any.json"), "{\"defaults\":{\"maxLossPercent\":100}}"));
        assertThat(new PolicyCheck(any).check(sample, Optional.empty()).passed()).isTrue();
        CheckReport report = new PolicyCheck(any).check(new LoadedResult(sample.file(), gone), Optional.empty());
        assertThat(report.passed()).isFalse();
        assertThat(report.failures()).extracting(CheckReport.Evaluation::message).containsExactly("udp 20k receivers: "
            + "1 of 3 gone, everything sent counted lost to it: 198.18.0.103 (during udp step 0: peer closed the "
            + "control connection)");
    }
}
