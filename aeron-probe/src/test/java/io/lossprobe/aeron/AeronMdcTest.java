package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.engine.ReceiveSideFactory;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.SendSideFactory;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.ReceiverResult;
import io.lossprobe.core.result.StepResult;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Aeron multi-destination-cast on loopback, through the engine as a multicast run has it: the publications' control
 * sockets on 127.0.0.1 (aeron.mdc), two receivers on 127.0.0.2 and 127.0.0.3 that ask for copies (control=127.0.0.1),
 * both accounted on their own. A third address (127.0.0.4) sends status messages asking to join the whole run: the
 * sender takes control frames from its receivers' addresses only (aeron.mdcReceivers), so no copy of the data ever
 * goes there, and the step says that someone else tried.
 */
@Tag("system")
class AeronMdcTest {
    private static final int PORT = 43970;
    private static final int FLOWS = 2;

    /** A local receive side bound on {@code address}, taking data from the sender's 127.0.0.1 only. */
    private static ReceiveSideFactory on(String address) {
        return (transport, plan, runId, auth, options) -> ReceiveSideFactory.local("127.0.0.1")
            .open(transport, plan.withBindAddress(address), runId, auth, options);
    }

    @Test
    @Timeout(120)
    void everyReceiverGetsACopyAndNoOneElseDoes() throws Exception {
        Plan plan = AeronRuns.plan(FLOWS, PORT, List.of("2k"), 1_000, 200);
        Map<String, String> options = Map.of("aeron.mdc", "127.0.0.1", "aeron.mdcReceivers", "127.0.0.2,127.0.0.3",
            "aeron.flowControl", "min", AeronOptions.TERM_LENGTH_OPTION.key(), "64k");
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong forged = new AtomicLong();
        AtomicLong copiesToStranger = new AtomicLong();
        StepResult step;
        try (DatagramSocket stranger = new DatagramSocket(new InetSocketAddress("127.0.0.4", 0))) {
            stranger.setSoTimeout(5);
            // Every 5 ms until the run ends (at most 4,000 times): a request for a SETUP to each flow's control socket.
            CompletableFuture<Void> joining = CompletableFuture.runAsync(() -> {
                try {
                    for (int n = 0; n < 4_000 && running.get(); n++) {
                        for (int flow = 0; flow < FLOWS; flow++) {
                            ByteBuffer sm = AeronSpoofedControlTest.setupRequest(7, AeronOptions.streamId(flow), 0);
                            stranger.send(new DatagramPacket(sm.array(), sm.capacity(),
                                new InetSocketAddress("127.0.0.1", PORT + flow)));
                            forged.incrementAndGet();
                        }
                        try {
                            stranger.receive(new DatagramPacket(new byte[2048], 2048));
                            copiesToStranger.incrementAndGet();
                        } catch (SocketTimeoutException e) {
                            // nothing came: as it should be
                        }
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            try {
                step = RunEngine.multicast(plan, Map.of("aeron", new AeronTransport()), options, new RunListener() {
                }, List.of(on("127.0.0.2"), on("127.0.0.3")), SendSideFactory.local("127.0.0.2"), 77).run()
                    .steps().get(0);
            } finally {
                running.set(false);
            }
            joining.get(30, TimeUnit.SECONDS);
        }
        assertThat(step.receivers()).hasSize(2);
        for (ReceiverResult rx : step.receivers()) {
            assertThat(rx.counts().sent()).isPositive();
            assertThat(rx.counts().received()).as("%s received", rx.receiver()).isEqualTo(rx.counts().sent());
            assertThat(rx.counts().lost()).isZero();
        }
        assertThat(step.transportCounters().get("aeron.statusSources")).as("the receivers heard").isEqualTo(2);
        assertThat(forged.get()).isPositive();
        assertThat(copiesToStranger.get()).as("datagrams the publications sent to 127.0.0.4").isZero();
        assertThat(step.warnings()).anyMatch(w -> w.matches("flow \\d: \\d+ Aeron control frame\\(s\\) from another "
            + "address than the receivers dropped.*"));
    }
}
