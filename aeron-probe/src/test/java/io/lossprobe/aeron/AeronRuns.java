package io.lossprobe.aeron;

import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.transport.Transport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Small bounded runs on loopback for the Aeron tests: a few ports, a few thousand messages/s, ~1 s windows. */
final class AeronRuns {
    static final String LOOPBACK = "127.0.0.1";

    private AeronRuns() {
    }

    static Plan plan(int ports, int basePort, List<String> levels, long durationMs) {
        return plan(ports, basePort, levels, durationMs, 200);
    }

    static Plan plan(int ports, int basePort, List<String> levels, long durationMs, long warmupMs) {
        return new Plan(List.of("aeron"), ports, basePort, levels.stream().map(Level::parse).toList(),
            TimeUnit.MILLISECONDS.toNanos(durationMs), TimeUnit.MILLISECONDS.toNanos(warmupMs),
            TimeUnit.SECONDS.toNanos(2), 64, LOOPBACK);
    }

    static RunResult run(Transport transport, Plan plan, Map<String, String> options, StepHooks hooks)
        throws Exception {
        return run(transport, plan, options, hooks, new RunListener() {
        });
    }

    static RunResult run(Transport transport, Plan plan, Map<String, String> options, StepHooks hooks,
                         RunListener listener) throws Exception {
        return new RunEngine(plan, Map.of("aeron", transport), options, listener, hooks).run();
    }
}
