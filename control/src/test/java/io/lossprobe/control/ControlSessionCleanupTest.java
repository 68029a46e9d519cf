package io.lossprobe.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A controller that vanishes mid-step: its receivers are closed, its ports freed, the server keeps serving. */
@Timeout(60)
class ControlSessionCleanupTest {
    private static final Auth AUTH = Auth.ofSecret("a shared secret for tests");

    /** Counts receivers opened and closed; moves no traffic. */
    static final class CountingTransport implements Transport {
        final AtomicInteger open = new AtomicInteger();

        @Override
        public String name() {
            return "udp";
        }

        @Override
        public ReceiverEndpoint openReceiver(ReceiverSpec spec) {
            open.incrementAndGet();
            return new ReceiverEndpoint() {
                @Override
                public void onReceiveThread(Runnable action) {
                    action.run();
                }

                @Override
                public void setPaused(boolean paused) {
                }

                @Override
                public void close() {
                    open.decrementAndGet();
                }
            };
        }

        @Override
        public SenderEndpoint openSender(SenderSpec spec) {
            throw new UnsupportedOperationException();
        }
    }

    @Test
    void aVanishedControllerIsCleanedUp() throws Exception {
        CountingTransport transport = new CountingTransport();
        ServerLimits limits = new ServerLimits(1_000_000, 64, TimeUnit.SECONDS.toNanos(60), 4, 1024, 2_000, 3_000);
        Plan plan = new Plan(List.of("udp"), 4, 21000, List.of(Level.parse("1k")), 1_000_000_000L, 0, 0, 64,
            "127.0.0.1");
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, limits, Map.of("udp", transport), null)) {
            ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000);
            client.negotiate(plan, 7, Map.of());
            ReceiveSide side = client.receiveSides().open(transport, plan, 7, client.dataKey(7), Map.of());
            side.beginStep(0, new int[] {4096, 4096, 4096, 4096}, null);
            assertThat(side.progress()).containsExactly(0, 0, 0, 0);
            assertThat(transport.open.get()).isEqualTo(1);

            client.abort(); // mid-step, no goodbye

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (transport.open.get() != 0 || server.activeSessions() != 0) {
                assertThat(System.nanoTime()).as("cleanup in time").isLessThan(deadline);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
            // Its ports are free again for the next controller.
            try (ControlClient next = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
                assertThat(next.negotiate(plan, 8, Map.of())).isEqualTo("127.0.0.1");
            }
        }
    }
}
