package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.testing.MemoryTransport;
import io.lossprobe.core.testing.VirtualTime;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The header names neither the transport nor the pass, so a message is bound to its pass only by its key. Two
 * transports (each a {@link MemoryTransport} under a real transport's name) run in one engine; in the second pass
 * message 5 of step 0, flow 0 is lost on the way, and someone who recorded the first pass's message 5 of step 0,
 * flow 0 injects it. Under one key for the whole run it verified and filled the loss (0 lost, the step clean);
 * under a key per pass it is foreign and the loss stays.
 */
@Timeout(30)
class CrossPassReplayTest {
    private static final long MS = 1_000_000L;
    private static final int RUN_ID = 0x2727;
    private static final int SIZE = 64;

    private final VirtualTime time = new VirtualTime(9_000 * MS);
    private final Map<String, SenderSpec> senders = new HashMap<>();
    private final Map<String, ReceiverSpec> receivers = new HashMap<>();

    /** A memory transport named {@code name}, recording the specs the engine opens it with. */
    private Transport named(String name, MemoryTransport inner) {
        return new Transport() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public ReceiverEndpoint openReceiver(ReceiverSpec spec) throws Exception {
                receivers.put(name, spec);
                return inner.openReceiver(spec);
            }

            @Override
            public SenderEndpoint openSender(SenderSpec spec) throws Exception {
                senders.put(name, spec);
                return inner.openSender(spec);
            }
        };
    }

    @Test
    void aMessageRecordedInTheUdpPassIsForeignInTheTcpPass() throws Exception {
        MemoryTransport udp = new MemoryTransport(time);
        MemoryTransport tcp = new MemoryTransport(time).drop(0, 0, 5);
        Plan plan = new Plan(List.of("udp", "tcp"), 1, 40000, List.of(Level.of(1000)), 100 * MS, 0, 200 * MS, SIZE,
            "127.0.0.1");
        boolean[] injected = {false};
        StepHooks replay = new StepHooks() {
            @Override
            public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs) {
                if (!transport.equals("tcp") || injected[0]) {
                    return;
                }
                injected[0] = true;
                MessageAuth udpKey = senders.get("udp").auth();
                long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, 0);
                long w1 = MessageHeader.word1(RUN_ID, 0, SIZE);
                long sent = time.nanoTime();
                long tag = udpKey.tag(w0, w1, 5, sent, sent);
                receivers.get("tcp").flows()[0].onMessage(w0, w1, 5, sent, sent, tag, SIZE, time.nanoTime());
            }
        };
        RunResult result = new RunEngine(plan, Map.of("udp", named("udp", udp), "tcp", named("tcp", tcp)), Map.of(),
            new RunListener() {
            }, replay, ReceiveSideFactory.LOCAL, SendSideFactory.local("127.0.0.1", time), RUN_ID).withClock(time)
            .run();

        assertThat(injected[0]).isTrue();
        Counts udpCounts = result.steps().get(0).counts();
        Counts tcpCounts = result.steps().get(1).counts();
        assertThat(result.steps().get(1).transport()).isEqualTo("tcp");
        assertThat(udpCounts.lost()).isZero();
        assertThat(udpCounts.foreign()).isZero();
        assertThat(tcpCounts.foreign()).as("the replayed UDP message in the TCP pass").isEqualTo(1);
        assertThat(tcpCounts.lost()).as("the real loss it would have hidden").isEqualTo(1);
        assertThat(tcpCounts.received()).isEqualTo(tcpCounts.sent() - 1);
    }
}
