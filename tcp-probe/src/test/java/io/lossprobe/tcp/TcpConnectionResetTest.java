package io.lossprobe.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.ReceiverEndpoint;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One connection reset mid-step (the receiver aborts flow 3 with SO_LINGER 0, so the sender gets a RST): that
 * flow reports the failure and its cause, the other flows' results stay exact, and the next step reconnects.
 */
@Tag("system")
class TcpConnectionResetTest {
    private static final int FLOWS = 6;
    private static final int VICTIM = 3;

    @Test
    @Timeout(60)
    void aResetFlowReportsItWhileTheOtherFlowsStayIntactAndTheNextStepReconnects() throws Exception {
        Plan plan = TcpRuns.plan(FLOWS, 42300, List.of(Level.of(6_000), Level.of(6_000)), 1000, 1000, 64);
        AtomicBoolean reset = new AtomicBoolean();
        StepHooks resetVictim = new StepHooks() {
            @Override
            public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs)
                throws Exception {
                if (step == 0 && !reset.get() && elapsedNs >= TimeUnit.MILLISECONDS.toNanos(400)) {
                    ((TcpReceiver) receiver).resetConnection(VICTIM);
                    reset.set(true);
                }
            }
        };

        RunResult result = TcpRuns.run(plan, Map.of(), resetVictim, new RunListener() {
        });

        assertThat(reset).isTrue();
        assertThat(result.status()).hasToString("complete");
        TcpRuns.assertIdentities(result);

        StepResult first = result.steps().get(0);
        FlowResult victim = first.flows().get(VICTIM);
        Map<String, Long> tcp = victim.transport();
        assertThat(tcp.get(TcpCounter.CONNECTION_FAILURES.key)).as("the sender saw its connection fail").isEqualTo(1);
        assertThat(tcp).as("with its cause").containsAnyOf(Map.entry(FailureCause.RESET.key, 1L),
            Map.entry(FailureCause.BROKEN_PIPE.key, 1L));
        assertThat(tcp.get(TcpCounter.CONNECTIONS_CLOSED.key)).isEqualTo(1);
        assertThat(victim.counts().sendFailed()).as("messages after the reset are refused, not 'behind'")
            .isPositive();
        assertThat(victim.counts().behind()).isZero();
        assertThat(first.transportCounters().get(TcpCounter.CONNECTION_FAILURES.key)).isEqualTo(1);
        assertThat(first.warnings()).as("the step says which flow failed and why, in words")
            .anySatisfy(w -> assertThat(w).startsWith("tcp flow " + VICTIM + ": connection ended mid-step")
                .containsAnyOf("reset", "broken pipe"));

        for (FlowResult flow : first.flows()) {
            if (flow.flow() == VICTIM) {
                continue;
            }
            Counts c = flow.counts();
            assertThat(c.scheduled()).as("flow %d", flow.flow()).isEqualTo(1_000);
            assertThat(c.sent()).as("flow %d", flow.flow()).isEqualTo(1_000);
            assertThat(c.received()).as("flow %d", flow.flow()).isEqualTo(1_000);
            assertThat(c.lost() + c.sendFailed() + c.behind() + c.corrupt() + c.duplicates() + c.reordered())
                .as("flow %d untouched", flow.flow()).isZero();
            assertThat(flow.transport().get(TcpCounter.CONNECTION_FAILURES.key)).isZero();
            assertThat(flow.transport()).containsKeys(TcpCounter.TOTAL_RETRANS.key, TcpCounter.RTT_US.key,
                TcpCounter.SND_CWND_SEGMENTS.key);
        }

        StepResult second = result.steps().get(1);
        FlowResult again = second.flows().get(VICTIM);
        assertThat(again.transport().get(TcpCounter.RECONNECTS.key)).isEqualTo(1);
        assertThat(again.transport().get(TcpCounter.CONNECTIONS_ACCEPTED.key)).isEqualTo(1);
        assertThat(second.counts().lost()).isZero();
        assertThat(second.counts().sendFailed()).isZero();
        assertThat(second.counts().sent()).isEqualTo(6_000);
        System.out.printf("reset flow %d: sent %d, sendFailed %d, received %d, lost %d, transport %s%n", VICTIM,
            victim.counts().sent(), victim.counts().sendFailed(), victim.counts().received(), victim.counts().lost(),
            tcp);
    }
}
