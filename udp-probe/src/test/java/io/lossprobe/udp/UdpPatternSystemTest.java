package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Raw UDP on loopback with the send patterns (docs/patterns.md): 2 flows at 6,400/s each for 1 s. Whatever the
 * pattern, the step schedules the constant count, the sender keeps up (a burst of 64 is handed over at once, in
 * sendmmsg batches), and every identity of the measurement contract holds.
 */
@Tag("system")
class UdpPatternSystemTest {
    /** Flows on 36420-36421: no other test uses them. */
    private static final int BASE_PORT = 36420;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"burst:64", "burst:64/10ms", "poisson", "onoff:50ms/50ms"})
    @Timeout(120)
    void aPatternedStepSendsItsScheduleAndKeepsEveryIdentity(String pattern) throws Exception {
        Plan plan = new Plan(List.of("udp"), 2, BASE_PORT, List.of(Level.parse("12.8k")), TimeUnit.SECONDS.toNanos(1),
            TimeUnit.MILLISECONDS.toNanos(200), TimeUnit.SECONDS.toNanos(2), 64, "127.0.0.1")
            .withPattern(pattern, 20_261_202L);
        RunResult result = new RunEngine(plan, Map.of("udp", new UdpTransport()), Map.of(), new RunListener() {
        }, StepHooks.NONE).run();
        TransportContractTest.assertIdentities(result);
        assertThat(result.plan().pattern()).isEqualTo(pattern);
        assertThat(result.plan().seed()).isEqualTo(20_261_202L);
        StepResult step = result.steps().get(0);
        assertThat(step.flows()).hasSize(2);
        for (FlowResult f : step.flows()) {
            Counts c = f.counts();
            assertThat(c.scheduled()).as("flow %d: the constant count", f.flow()).isEqualTo(6_400);
            assertThat(c.sent()).as("flow %d: sent == scheduled", f.flow()).isEqualTo(c.scheduled());
            assertThat(c.sendFailed()).isZero();
            assertThat(c.behind()).isZero();
            assertThat(c.corrupt()).isZero();
            assertThat(c.foreign()).isZero();
            assertThat(c.duplicates()).isZero();
            // Loopback loses only what the receiving socket dropped, counted by the kernel.
            assertThat(c.lost()).as("flow %d: lost == socket drops", f.flow()).isEqualTo(f.socketDrops());
        }
        assertThat(step.counts().scheduled()).isEqualTo(12_800);
        // Every window message was handed over in some hand-off; a burst's whole group in one.
        io.lossprobe.core.result.SenderLimit limit = step.senderLimit();
        assertThat(limit.handOffMessages()).isEqualTo(step.counts().sent());
        if (pattern.startsWith("burst:64")) {
            assertThat(limit.largestHandOff()).as("a burst left whole").isEqualTo(64);
            assertThat(limit.handOffs()).as("200 groups of 64").isEqualTo(200);
        }
    }
}
