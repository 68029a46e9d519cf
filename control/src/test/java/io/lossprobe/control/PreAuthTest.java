package io.lossprobe.control;

import static io.lossprobe.control.ControlTesting.AUTH;
import static io.lossprobe.control.ControlTesting.plan;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Before authentication: connections that trickle bytes or say nothing cannot lock a controller out (they hold no
 * session slot, are capped per address and in all with the oldest making way, and have one deadline for the whole
 * handshake), and nothing is allocated for a stranger's length prefix.
 */
@Timeout(60)
class PreAuthTest {
    /** Default limits (4 sessions, 4 unauthenticated per address, 32 in all, 5 s handshake). */
    private static ControlServer server(ServerLimits limits) throws IOException {
        return new ControlServer("127.0.0.1", 0, AUTH, limits, ControlTesting.only(new ControlTesting.NoTransport()),
            null);
    }

    /**
     * Trickles a genuine hello, one byte a second after its length prefix, from {@code from}; reconnects when the
     * server closes it, until stopped. Counts its connections.
     */
    private static final class Trickler extends Thread {
        final String from;
        final int port;
        final AtomicBoolean stop;
        final AtomicInteger connections = new AtomicInteger();

        Trickler(String from, int port, AtomicBoolean stop) {
            this.from = from;
            this.port = port;
            this.stop = stop;
            setDaemon(true);
        }

        @Override
        public void run() {
            byte[] hello = ("{\"type\":\"hello\",\"version\":" + Codec.VERSION + ",\"nonce\":\"" + Auth.nonce() + "\"}")
                .getBytes(StandardCharsets.UTF_8);
            while (!stop.get()) {
                try (RawController c = RawController.connect(from, port)) {
                    connections.incrementAndGet();
                    OutputStream out = c.socket.getOutputStream();
                    out.write(new byte[] {0, 0, 0, (byte) hello.length});
                    for (int i = 0; i < hello.length && !stop.get(); i++) {
                        out.write(hello[i]);
                        out.flush();
                        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
                        while (!stop.get() && System.nanoTime() < until) {
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                        }
                    }
                } catch (IOException closedByTheServer) {
                    // Evicted or timed out: come back at once, as an attacker would.
                }
            }
        }
    }

    private static List<Trickler> trickle(int count, String from, int port, AtomicBoolean stop) {
        List<Trickler> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Trickler t = new Trickler(from, port, stop);
            t.start();
            out.add(t);
        }
        return out;
    }

    /** A full controller: handshake and plan, timed. */
    private static long servedInNs(ControlServer server, int basePort) throws IOException {
        long start = System.nanoTime();
        try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
            assertThat(client.negotiate(plan(basePort), 1, Map.of())).isEqualTo("127.0.0.1");
        }
        return System.nanoTime() - start;
    }

    @Test
    void sixTricklersFromAnotherHostDoNotLockOutAController() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        try (ControlServer server = server(ServerLimits.DEFAULTS)) {
            List<Trickler> tricklers = trickle(6, "127.0.0.2", server.port(), stop);
            ControlTesting.await("tricklers connected", 10_000,
                () -> tricklers.stream().allMatch(t -> t.connections.get() > 0) && server.preAuthConnections() == 4);
            assertThat(server.activeSessions()).isZero();
            for (int i = 0; i < 5; i++) {
                assertThat(servedInNs(server, 22000)).as("served at once, not after a handshake timeout")
                    .isLessThan(TimeUnit.SECONDS.toNanos(2));
            }
            assertThat(server.preAuthConnections()).as("the cap per address").isLessThanOrEqualTo(4);
            assertThat(server.preAuthEvictions()).as("the tricklers' own oldest made way").isPositive();
        } finally {
            stop.set(true);
        }
    }

    /** Even from the controller's own address: the newcomer closes the oldest trickler and is served. */
    @Test
    void sixTricklersFromTheControllersOwnAddressDoNotLockItOut() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        try (ControlServer server = server(ServerLimits.DEFAULTS)) {
            List<Trickler> tricklers = trickle(6, "127.0.0.1", server.port(), stop);
            ControlTesting.await("tricklers connected", 10_000,
                () -> tricklers.stream().allMatch(t -> t.connections.get() > 0) && server.preAuthConnections() == 4);
            for (int i = 0; i < 5; i++) {
                assertThat(servedInNs(server, 22100)).isLessThan(TimeUnit.SECONDS.toNanos(2));
            }
        } finally {
            stop.set(true);
        }
    }

    /** Thirty-six silent connections from nine addresses: at most 32 held, the oldest closed, a controller served. */
    @Test
    void theTotalCapClosesTheOldestAndAControllerIsServed() throws Exception {
        List<RawController> silent = new ArrayList<>();
        try (ControlServer server = server(ServerLimits.DEFAULTS.withSessions(1))) {
            for (int host = 2; host <= 10; host++) {
                for (int i = 0; i < 4; i++) {
                    silent.add(RawController.connect("127.0.0." + host, server.port()));
                }
            }
            ControlTesting.await("all accepted", 10_000, () -> server.preAuthEvictions() == 4);
            assertThat(server.preAuthConnections()).isEqualTo(32);
            // The first four were closed to make room: their reads end at once.
            for (int i = 0; i < 4; i++) {
                assertThat(silent.get(i).drain()).isEmpty();
            }
            assertThat(servedInNs(server, 22200)).isLessThan(TimeUnit.SECONDS.toNanos(2));
            assertThat(server.preAuthConnections()).as("the controller's own made way for nobody")
                .isLessThanOrEqualTo(32);
        } finally {
            for (RawController c : silent) {
                c.close();
            }
        }
    }

    /** Unauthenticated connections hold no session: with one session slot, it still goes to the controller. */
    @Test
    void unauthenticatedConnectionsHoldNoSession() throws Exception {
        List<RawController> silent = new ArrayList<>();
        try (ControlServer server = server(ServerLimits.DEFAULTS.withSessions(1))) {
            for (int i = 0; i < 3; i++) {
                silent.add(RawController.connect("127.0.0.3", server.port()));
            }
            ControlTesting.await("held", 10_000, () -> server.preAuthConnections() == 3);
            try (ControlClient first = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
                first.negotiate(plan(22300), 1, Map.of());
                assertThat(server.activeSessions()).isEqualTo(1);
                // A second authenticated controller is told the server is busy, in words.
                assertThatThrownBy(() -> ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000))
                    .hasMessage("server: server busy: 1 sessions already");
            }
        } finally {
            for (RawController c : silent) {
                c.close();
            }
        }
    }

    /**
     * The handshake has one deadline, not one per read: a hello trickled a byte every 200 ms (each read quick) is
     * cut off at the deadline, long before it would complete.
     */
    @Test
    void theWholeHandshakeHasOneDeadline() throws Exception {
        try (ControlServer server = server(ServerLimits.DEFAULTS.withTimeouts(1_000, 5_000, 1_000));
             RawController c = RawController.connect(server.port())) {
            byte[] hello = ("{\"type\":\"hello\",\"version\":" + Codec.VERSION + ",\"nonce\":\"" + Auth.nonce() + "\"}")
                .getBytes(StandardCharsets.UTF_8);
            long start = System.nanoTime();
            OutputStream out = c.socket.getOutputStream();
            out.write(new byte[] {0, 0, 0, (byte) hello.length});
            long closedAfter = -1;
            try {
                for (byte b : hello) {
                    out.write(b);
                    out.flush();
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
                    if (c.socket.getInputStream().available() > 0) {
                        closedAfter = System.nanoTime() - start;
                        break;
                    }
                }
            } catch (IOException reset) {
                closedAfter = System.nanoTime() - start;
            }
            assertThat(closedAfter).as("answered before the hello was complete (%d bytes at 5/s)", hello.length)
                .isPositive().isLessThan(TimeUnit.MILLISECONDS.toNanos(1_600));
            assertThat(c.drain()).contains("message not complete in time");
        }
    }
}
