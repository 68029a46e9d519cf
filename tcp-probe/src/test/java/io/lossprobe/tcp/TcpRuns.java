package io.lossprobe.tcp;

import static org.assertj.core.api.Assertions.assertThat;

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

/** Runs small TCP plans on loopback through the real engine, for the system tests of this module. */
final class TcpRuns {
    static final String LOOPBACK = "127.0.0.1";

    private TcpRuns() {
    }

    static Plan plan(int ports, int basePort, List<Level> levels, long windowMs, long drainMs, int messageSize) {
        return new Plan(List.of("tcp"), ports, basePort, levels, TimeUnit.MILLISECONDS.toNanos(windowMs),
            TimeUnit.MILLISECONDS.toNanos(200), TimeUnit.MILLISECONDS.toNanos(drainMs), messageSize, LOOPBACK);
    }

    static RunResult run(Plan plan, Map<String, String> options, StepHooks hooks, RunListener listener)
        throws Exception {
        TcpTransport tcp = new TcpTransport();
        return new RunEngine(plan, Map.of("tcp", tcp), options, listener, hooks).run();
    }

    /** The two identities of the measurement contract, for every flow of every step. */
    static void assertIdentities(RunResult result) {
        for (StepResult step : result.steps()) {
            Counts sum = Counts.ZERO;
            for (FlowResult flow : step.flows()) {
                Counts c = flow.counts();
                assertThat(c.received() + c.lost()).as("received + lost == sent, flow %d step %d", flow.flow(),
                    step.step()).isEqualTo(c.sent());
                assertThat(c.sent() + c.sendFailed() + c.behind())
                    .as("sent + sendFailed + behind == scheduled, flow %d step %d", flow.flow(), step.step())
                    .isEqualTo(c.scheduled());
                sum = sum.plus(c);
            }
            assertThat(step.counts()).isEqualTo(sum);
        }
    }
}
