package io.lossprobe.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.StepStart;
import io.lossprobe.core.engine.StepTiming;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A controller that vanishes mid-step: its receivers are closed, its ports freed, the server keeps serving. */
@Timeout(60)
class ControlSessionCleanupTest {
    private static final Auth AUTH = Auth.ofSecret("a shared secret for tests");

    @Test
    void aVanishedControllerIsCleanedUp() throws Exception {
        ControlTesting.CountingTransport transport = new ControlTesting.CountingTransport();
        ServerLimits limits = ControlTesting.LIMITS.withTimeouts(2_000, 3_000, 1_000);
        Plan plan = new Plan(List.of("udp"), 4, 21000, List.of(Level.parse("1k")), 1_000_000_000L, 0, 0, 64,
            "127.0.0.1");
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, limits, ControlTesting.only(transport),
            null)) {
            ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000);
            client.negotiate(plan, 7, Map.of());
            ReceiveSide side = client.receiveSides().open(transport, plan, 7, client.dataKey(7), Map.of());
            side.beginStep(StepStart.of(plan, 0, plan.levels().get(0), StepTiming.of(plan), SendFilter.NONE, 0));
            assertThat(side.progress()).containsExactly(0, 0, 0, 0);
            assertThat(transport.open.get()).isEqualTo(1);

            client.abort(); // mid-step, no goodbye

            ControlTesting.await("cleanup", 10_000, () -> transport.open.get() == 0 && server.activeSessions() == 0);
            // Its ports are free again for the next controller.
            try (ControlClient next = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
                assertThat(next.negotiate(plan, 8, Map.of())).isEqualTo("127.0.0.1");
            }
        }
    }
}
