package io.lossprobe.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.wire.MessageHeader;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Connections that are not the flow's sender's. Before, a second connection to a receiver port with one framed
 * message (the run id seen on the wire, sequence 2^62) made a clean flow report most of its messages lost and a
 * false "tcp promises delivery ... defect" warning; and a flood of connections on the data ports exhausted file
 * descriptors, killed the receive event loop and broke the run. Now each flow takes one connection; any other is
 * refused at once (a reset, no file descriptor kept) and counted as foreign, and the counts stay exact.
 */
@Tag("system")
class TcpHostileTest extends TransportContractTest {
    private static final int RUN_ID = 0x7c9;

    @Override
    protected Transport transport() {
        return new TcpTransport();
    }

    @Override
    protected int basePort() {
        return 42700;
    }

    private static byte[] forged(int step, long seq) {
        ByteBuffer b = ByteBuffer.allocate(64);
        long now = System.nanoTime();
        b.putLong(MessageHeader.word0(MessageHeader.KIND_DATA, 0)).putLong(MessageHeader.word1(RUN_ID, step, 64))
            .putLong(seq).putLong(now).putLong(now).putLong(12345);
        return b.array();
    }

    private static long openFileDescriptors() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    @Test
    @Timeout(120)
    void aSecondConnectionWithAForgedMessageIsRefusedAndChangesNothing() throws Exception {
        Plan plan = plan(2, List.of(Level.parse("4k")), 1000);
        int[] calls = {0};
        RunResult result = run(plan, new StepHooks() {
            @Override
            public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs)
                throws Exception {
                if (calls[0]++ > 0) {
                    return;
                }
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress(LOOPBACK, basePort()), 5_000);
                    OutputStream out = s.getOutputStream();
                    out.write(forged(step, 1L << 62));
                    out.flush();
                } catch (IOException refusedAtOnce) {
                    // The receiver resets the extra connection as it accepts it: the write may fail. Good.
                }
            }
        }, RUN_ID, io.lossprobe.core.wire.MessageAuth.random());
        assertIdentities(result);
        StepResult step = result.steps().get(0);
        assertThat(step.counts().lost()).isZero();
        assertThat(step.counts().received()).isEqualTo(step.counts().sent());
        assertThat(step.flows().get(0).counts().foreign()).isEqualTo(1);
        assertThat(step.flows().get(0).transport()).containsEntry(TcpCounter.CONNECTIONS_REFUSED.key, 1L);
        assertThat(step.warnings()).noneMatch(w -> w.contains("promises delivery"));
        assertThat(step.warnings()).anyMatch(w -> w.contains("foreign"));
    }

    @Test
    @Timeout(180)
    void aConnectionFloodOnADataPortLeavesTheRunExactAndNoDescriptorsBehind() throws Exception {
        Plan plan = plan(4, List.of(Level.parse("8k"), Level.parse("8k")), 1000);
        long fdsBefore = openFileDescriptors();
        int flood = 400;
        List<Socket> attackers = new ArrayList<>();
        int[] calls = {0};
        RunResult result;
        try {
            result = run(plan, new StepHooks() {
                @Override
                public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs) {
                    if (step != 0 || calls[0]++ > 0) {
                        return;
                    }
                    for (int i = 0; i < flood; i++) {
                        Socket s = new Socket();
                        attackers.add(s);
                        try {
                            s.connect(new InetSocketAddress(LOOPBACK, basePort() + (i % 4)), 5_000);
                        } catch (IOException e) {
                            // A full backlog may refuse some: the flood still happened.
                        }
                    }
                }
            }, RUN_ID, io.lossprobe.core.wire.MessageAuth.random());
        } finally {
            for (Socket s : attackers) {
                s.close();
            }
        }
        assertIdentities(result);
        assertThat(result.steps()).hasSize(2);
        long refused = 0;
        for (StepResult step : result.steps()) {
            assertThat(step.counts().lost()).as("step %d", step.step()).isZero();
            assertThat(step.counts().sent()).isBetween(step.counts().scheduled() * 9 / 10, step.counts().scheduled());
            for (FlowResult f : step.flows()) {
                refused += f.transport().get(TcpCounter.CONNECTIONS_REFUSED.key);
            }
        }
        assertThat(refused).as("extra connections refused").isGreaterThan(flood / 2);
        // Nothing of the flood is left open in this process once the run's own sockets closed.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (openFileDescriptors() > fdsBefore + 8) {
            assertThat(System.nanoTime()).as("descriptors back to %d, now %d", fdsBefore, openFileDescriptors())
                .isLessThan(deadline);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }
}
