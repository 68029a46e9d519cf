package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlClient;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.engine.SendSide;
import io.lossprobe.core.engine.StepStart;
import io.lossprobe.core.engine.StepTiming;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A controller that falls silent in the middle of a reverse step (gone without closing, or its control connection
 * cut off: no FIN, no RST) must not leave the server sending to it: the server stops within
 * {@code ServerSession.SENDING_SILENCE_NS} (5 s) of the last request, long before the 20 s window or its 30 s idle
 * timeout would end it. The datagrams are counted where they arrive, on a plain socket. Ports 44900, 44910, 44930.
 */
@Tag("system")
class ControllerSilenceTest {
    private static final Auth AUTH = Auth.ofSecret("a silent controller");
    private static final int PORT = 44900;
    private static final long BOUND_MS = 5_000;
    /** Scheduling on a busy host, and the send loop's last cycle. */
    private static final long SLACK_MS = 750;

    @Test
    @Timeout(60)
    void aServerSendingToASilentControllerStopsWithinTheBound() throws Exception {
        Plan plan = new Plan(List.of("udp"), 1, PORT, List.of(Level.parse("2k")), TimeUnit.SECONDS.toNanos(20), 0,
            TimeUnit.SECONDS.toNanos(1), 64, "127.0.0.1");
        AtomicLong arrivals = new AtomicLong();
        AtomicLong lastArrivalNs = new AtomicLong();
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null);
             DatagramSocket receiver = new DatagramSocket(new InetSocketAddress("127.0.0.1", PORT))) {
            receiver.setSoTimeout(100);
            Thread reader = new Thread(() -> {
                byte[] buf = new byte[2048];
                while (!receiver.isClosed()) {
                    try {
                        receiver.receive(new DatagramPacket(buf, buf.length));
                        lastArrivalNs.set(System.nanoTime());
                        arrivals.incrementAndGet();
                    } catch (SocketTimeoutException e) {
                        // look again
                    } catch (java.io.IOException e) {
                        return;
                    }
                }
            }, "silence-test-reader");
            reader.start();
            ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000);
            client.negotiate(plan, 99, Map.of());
            SendSide sender = client.sendSides().open(new UdpTransport(), plan, 99, client.dataKey(99), Map.of());
            sender.reachFrom(PunchingSockets.of(receiver), client.dataKey(99).forPass("udp", 64), 99);
            sender.beginStep(StepStart.of(plan, 0, plan.levels().get(0), StepTiming.of(plan), SendFilter.NONE, 0));
            sender.start();
            sender.beginWindow();
            // A controller at work: it polls the sending, as the engine does, until 300 datagrams have arrived.
            long pollUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (arrivals.get() < 300 && System.nanoTime() < pollUntil) {
                sender.awaitDone(TimeUnit.MILLISECONDS.toNanos(20));
            }
            assertThat(arrivals.get()).as("the server sends while polled").isGreaterThanOrEqualTo(300);
            long silentFromNs = System.nanoTime(); // no request from here on; the connection stays open

            long deadline = silentFromNs + TimeUnit.SECONDS.toNanos(15);
            while (System.nanoTime() < deadline
                && (server.activeSessions() > 0 || System.nanoTime() - lastArrivalNs.get() < 500_000_000L)) {
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
            }
            long stoppedAfterMs = TimeUnit.NANOSECONDS.toMillis(lastArrivalNs.get() - silentFromNs);
            System.out.println("silent controller: last datagram " + stoppedAfterMs + " ms into the silence, "
                + arrivals.get() + " in all");
            assertThat(server.activeSessions()).as("the server ended the session").isZero();
            assertThat(stoppedAfterMs).as("ms from the last request to the last datagram")
                .isLessThanOrEqualTo(BOUND_MS + SLACK_MS);
            client.abort();
            receiver.close();
            reader.join(5_000);
        }
    }

    /** Once the sending is done the controller drains without a word, for up to Tmax: that silence is expected. */
    @Test
    @Timeout(60)
    void aControllerSilentInItsDrainAfterTheSendingEndedKeepsItsSession() throws Exception {
        Plan plan = new Plan(List.of("udp"), 1, PORT + 10, List.of(Level.parse("2k")),
            TimeUnit.MILLISECONDS.toNanos(300), 0, TimeUnit.SECONDS.toNanos(5), 64, "127.0.0.1");
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null);
             DatagramSocket receiver = new DatagramSocket(new InetSocketAddress("127.0.0.1", PORT + 10));
             ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
            client.negotiate(plan, 98, Map.of());
            SendSide sender = client.sendSides().open(new UdpTransport(), plan, 98, client.dataKey(98), Map.of());
            sender.reachFrom(PunchingSockets.of(receiver), client.dataKey(98).forPass("udp", 64), 98);
            sender.beginStep(StepStart.of(plan, 0, plan.levels().get(0), StepTiming.of(plan), SendFilter.NONE, 0));
            sender.beginWindow();
            sender.start();
            assertThat(sender.awaitDone(TimeUnit.SECONDS.toNanos(10))).as("the 300 ms step's sending ended").isTrue();
            // The stimulus, not a wait for a condition: a drain of 6 s with nothing to say, longer than the bound.
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(BOUND_MS + 1_000));
            assertThat(sender.finish().counts()[0].sent()).isEqualTo(600);
            assertThat(server.activeSessions()).isEqualTo(1);
        }
    }
    /**
     * Forward: a controller silent during a receive step (it polls the server's receivers from the warm-up to the
     * drain's end) ends the session after the same bound, so the step's ports are free for the next run at once,
     * not after the idle timeout (30 s).
     */
    @Test
    @Timeout(60)
    void aServerReceivingForASilentControllerEndsTheSessionWithinTheBound() throws Exception {
        Plan plan = new Plan(List.of("udp"), 1, PORT + 30, List.of(Level.parse("2k")), TimeUnit.SECONDS.toNanos(20),
            0, TimeUnit.SECONDS.toNanos(1), 64, "127.0.0.1");
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("udp", new UdpTransport()), null)) {
            ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000);
            client.negotiate(plan, 97, Map.of());
            io.lossprobe.core.engine.ReceiveSide side = client.receiveSides().open(new UdpTransport(), plan, 97,
                client.dataKey(97), Map.of());
            side.beginStep(StepStart.of(plan, 0, plan.levels().get(0), StepTiming.of(plan), SendFilter.NONE, 0));
            side.progress();
            long silentFromNs = System.nanoTime(); // no request from here on; the connection stays open
            long deadline = silentFromNs + TimeUnit.SECONDS.toNanos(15);
            while (server.activeSessions() > 0) {
                assertThat(System.nanoTime()).as("the server ends the session within 15 s").isLessThan(deadline);
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
            }
            long endedAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - silentFromNs);
            System.out.println("silent controller, receive step: session ended " + endedAfterMs + " ms in");
            assertThat(endedAfterMs).as("ms from the last request to the session's end")
                .isBetween(BOUND_MS - 100, BOUND_MS + SLACK_MS);
            // The receiver's port is free again.
            new DatagramSocket(new InetSocketAddress("127.0.0.1", PORT + 30)).close();
            client.abort();
        }
    }
}
