package io.lossprobe.control;

import static io.lossprobe.control.ControlTesting.AUTH;
import static io.lossprobe.control.ControlTesting.LIMITS;
import static io.lossprobe.control.ControlTesting.plan;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.StepStart;
import io.lossprobe.core.engine.StepTiming;
import io.lossprobe.core.plan.Plan;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every control frame after the handshake is authenticated: a relay (or anyone on the path) that alters, replays,
 * reorders, drops or reflects a frame is detected by whichever end receives it, and the session ends with a clear
 * error instead of a wrong result.
 */
@Timeout(60)
class FrameAuthTest {
    private ControlTesting.CountingTransport transport;
    private ControlServer server;

    @BeforeEach
    void start() throws IOException {
        transport = new ControlTesting.CountingTransport();
        server = new ControlServer("127.0.0.1", 0, AUTH, LIMITS, ControlTesting.only(transport), null);
    }

    @AfterEach
    void stop() {
        assertThat(server.internalErrors()).isZero();
        server.close();
    }

    /**
     * Forwards whole frames between a controller and the server, passing each server-to-controller frame through
     * {@code toController} (which returns the frames to forward in its place: none, one, or several).
     */
    private static final class Relay implements AutoCloseable {
        final ServerSocket listener;
        final int serverPort;
        final Function<byte[], List<byte[]>> toController;
        volatile Socket a;
        volatile Socket b;

        Relay(int serverPort, Function<byte[], List<byte[]>> toController) throws IOException {
            this.listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            this.serverPort = serverPort;
            this.toController = toController;
            Thread t = new Thread(this::run, "relay");
            t.setDaemon(true);
            t.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        private void run() {
            try {
                a = listener.accept();
                b = new Socket(InetAddress.getLoopbackAddress(), serverPort);
                Thread up = new Thread(() -> pump(a, b, List::of), "relay-up");
                up.setDaemon(true);
                up.start();
                pump(b, a, toController);
            } catch (IOException e) {
                // The test is over.
            }
        }

        private static void pump(Socket from, Socket to, Function<byte[], List<byte[]>> edit) {
            try {
                DataInputStream in = new DataInputStream(from.getInputStream());
                DataOutputStream out = new DataOutputStream(to.getOutputStream());
                while (true) {
                    byte[] frame = new byte[in.readInt()];
                    in.readFully(frame);
                    for (byte[] f : edit.apply(frame)) {
                        out.writeInt(f.length);
                        out.write(f);
                    }
                    out.flush();
                }
            } catch (IOException e) {
                try {
                    to.close();
                } catch (IOException ignored) {
                    // Closing anyway.
                }
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
            for (Socket s : new Socket[] {a, b}) {
                if (s != null) {
                    s.close();
                }
            }
        }
    }

    private static boolean is(byte[] frame, String type) {
        return new String(frame, StandardCharsets.UTF_8).contains("\"type\":\"" + type + "\"");
    }

    /** Runs a step through the relay up to its close: the step result is the frame the relay may rewrite. */
    private static ReceiveSide.Receipt stepThrough(ControlClient client) throws Exception {
        Plan plan = plan(23000);
        client.negotiate(plan, 5, Map.of());
        ReceiveSide side = client.receiveSides().open(new ControlTesting.NoTransport(), plan, 5, client.dataKey(5),
            Map.of());
        side.beginStep(StepStart.of(plan, 0, plan.levels().get(0), StepTiming.of(plan), SendFilter.NONE, 0));
        side.beginWindow();
        side.progress();
        return side.closeStep(0, new long[] {10, 10, 10, 10});
    }

    /** Without a change on the way, the relay is invisible: the step closes with the server's result. */
    @Test
    void anHonestRelayChangesNothing() throws Exception {
        try (Relay relay = new Relay(server.port(), List::of);
             ControlClient client = ControlClient.connect("127.0.0.1", relay.port(), AUTH, 5_000)) {
            ReceiveSide.Receipt r = stepThrough(client);
            assertThat(r.flows()).hasSize(4);
            assertThat(r.flows()[0].received()).isZero();
        }
    }

    /** The case: a relay rewrote step-result (100% loss reported, exit 0). Now the controller refuses it. */
    @Test
    void aRewrittenStepResultIsDetected() throws Exception {
        Function<byte[], List<byte[]>> rewrite = frame -> {
            if (!is(frame, "step-result")) {
                return List.of(frame);
            }
            String text = new String(frame, StandardCharsets.ISO_8859_1);
            assertThat(text).contains("\"received\":0,");
            return List.of(text.replaceFirst("\"received\":0,", "\"received\":7,")
                .getBytes(StandardCharsets.ISO_8859_1)); // same length: only the MAC can tell
        };
        try (Relay relay = new Relay(server.port(), rewrite);
             ControlClient client = ControlClient.connect("127.0.0.1", relay.port(), AUTH, 5_000)) {
            assertThatThrownBy(() -> stepThrough(client)).isInstanceOf(ControlProtocolException.class)
                .hasMessageStartingWith("control frame 6 failed authentication: altered, replayed, reordered or "
                    + "dropped on the way");
        }
    }

    @Test
    void aReplayedOrDroppedReplyIsDetected() throws Exception {
        // The server's 'ok' to begin-step, sent twice: the copy arrives as the reply to begin-window.
        Function<byte[], List<byte[]>> replay = frame -> is(frame, "ok") ? List.of(frame, frame) : List.of(frame);
        try (Relay relay = new Relay(server.port(), replay);
             ControlClient client = ControlClient.connect("127.0.0.1", relay.port(), AUTH, 5_000)) {
            assertThatThrownBy(() -> stepThrough(client)).hasMessageContaining("failed authentication");
        }
        // The reply to the first progress poll dropped, the second's taken in its place... were the first not
        // waited for: here the controller waits, so a dropped reply is a timeout, and the next frame fails.
        Function<byte[], List<byte[]>> drop = frame -> is(frame, "ready") ? List.of() : List.of(frame);
        try (Relay relay = new Relay(server.port(), drop);
             ControlClient client = ControlClient.connect("127.0.0.1", relay.port(), AUTH, 1_000)) {
            assertThatThrownBy(() -> stepThrough(client)).hasMessageContaining("did not answer");
        }
    }

    /**
     * The server's side, frame by frame from a hand-written controller: the genuine sequence is served; a frame
     * altered, replayed, sent out of order, skipped, or reflected (the server's own frame sent back) ends the
     * session with the MAC error.
     */
    @Test
    void theServerRefusesAlteredReplayedReorderedDroppedAndReflectedFrames() throws Exception {
        String plan = RawController.planMessage(1, plan(23100));
        String clock = "{\"type\":\"clock\",\"seq\":1}";
        for (String attack : List.of("none", "altered", "replayed", "reordered", "dropped", "reflected")) {
            try (RawController c = RawController.connect(server.port())) {
                c.handshake(AUTH);
                byte[] first = c.frame(plan.getBytes(StandardCharsets.UTF_8));
                byte[] second = c.frame(clock.getBytes(StandardCharsets.UTF_8));
                switch (attack) {
                    case "none" -> {
                        c.raw(first);
                        c.raw(second);
                    }
                    case "altered" -> {
                        first[first.length - 30] ^= 1;
                        c.raw(first);
                    }
                    case "replayed" -> {
                        c.raw(first);
                        c.raw(first);
                    }
                    case "reordered" -> {
                        c.raw(second);
                        c.raw(first);
                    }
                    case "dropped" -> c.raw(second);
                    case "reflected" -> {
                        // The server's own plan-ok, as it came, sent back to it as the next frame.
                        c.raw(first);
                        c.raw(c.readRaw());
                    }
                    default -> throw new AssertionError(attack);
                }
                if (attack.equals("none")) {
                    assertThat(c.read().get("type").asText()).isEqualTo("plan-ok");
                    assertThat(c.read().get("type").asText()).isEqualTo("clock-reply");
                } else {
                    assertThat(c.drain()).as(attack).contains("failed authentication");
                }
            }
        }
    }
}
