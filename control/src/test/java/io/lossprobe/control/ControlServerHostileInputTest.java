package io.lossprobe.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile input on the control port: the server answers with an error or closes, never crashes, keeps memory
 * bounded, and a well-behaved controller is served afterwards and meanwhile.
 */
@Timeout(60)
class ControlServerHostileInputTest {
    private static final Auth AUTH = Auth.ofSecret("correct horse battery staple");
    private static final ServerLimits LIMITS = new ServerLimits(1_000_000, 64, TimeUnit.SECONDS.toNanos(60), 8,
        1024, 1_000, 5_000);
    private ControlServer server;

    /** Never opened: these tests stop before any receiver is bound. */
    static final class NoTransport implements Transport {
        @Override
        public String name() {
            return "udp";
        }

        @Override
        public ReceiverEndpoint openReceiver(ReceiverSpec spec) {
            throw new UnsupportedOperationException();
        }

        @Override
        public SenderEndpoint openSender(SenderSpec spec) {
            throw new UnsupportedOperationException();
        }
    }

    @BeforeEach
    void start() throws IOException {
        server = new ControlServer("127.0.0.1", 0, AUTH, LIMITS, Map.of("udp", new NoTransport()), null);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private Socket raw() throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", server.port()), 2_000);
        s.setSoTimeout(10_000);
        return s;
    }

    /** Reads until the server closes; returns what it said (an error message, if any). */
    private static String drain(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        byte[] all = in.readAllBytes();
        return new String(all, StandardCharsets.UTF_8);
    }

    private static void frame(DataOutputStream out, String json) throws IOException {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
        out.flush();
    }

    private static Plan plan(int basePort) {
        return new Plan(List.of("udp"), 4, basePort, List.of(Level.parse("1k")), 1_000_000_000L, 0,
            1_000_000_000L, 64, "127.0.0.1");
    }

    /** A well-behaved controller still gets through: handshake and plan accepted. */
    private void assertServerStillServes(int basePort) throws IOException {
        try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
            assertThat(client.negotiate(plan(basePort), 1, Map.of())).isEqualTo("127.0.0.1");
        }
    }

    @Test
    void randomBytesAreRefused() throws IOException {
        Random r = new Random(42);
        for (int i = 0; i < 20; i++) {
            try (Socket s = raw()) {
                byte[] junk = new byte[1 + r.nextInt(4096)];
                r.nextBytes(junk);
                s.getOutputStream().write(junk);
                s.shutdownOutput();
                drain(s); // the server answers or closes; it must not hang
            }
        }
        assertServerStillServes(20000);
    }

    @Test
    void anOversizedLengthIsRefusedBeforeAnythingIsAllocated() throws IOException {
        try (Socket s = raw()) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(Integer.MAX_VALUE);
            out.flush();
            assertThat(drain(s)).contains("outside 1..");
        }
        try (Socket s = raw()) {
            new DataOutputStream(s.getOutputStream()).writeInt(-5);
            assertThat(drain(s)).contains("outside 1..");
        }
        assertServerStillServes(20100);
    }

    @Test
    void aWrongVersionOrWrongFieldTypesAreRefused() throws IOException {
        String[] bad = {
            "{\"type\":\"hello\",\"version\":2}",
            "{\"type\":\"hello\",\"version\":\"1\"}",
            "{\"type\":42,\"version\":1}",
            "[1,2,3]",
            "not json at all",
            "{\"version\":1}",
        };
        for (String json : bad) {
            try (Socket s = raw()) {
                frame(new DataOutputStream(s.getOutputStream()), json);
                assertThat(drain(s)).as(json).contains("error");
            }
        }
        assertServerStillServes(20200);
    }

    @Test
    void aWrongAuthAnswerIsRefused() {
        assertThatThrownBy(() -> ControlClient.connect("127.0.0.1", server.port(),
            Auth.ofSecret("not the right secret"), 5_000))
            .hasMessageContaining("authentication failed");
    }

    @Test
    void aReplayedAuthAnswerIsRefused() throws IOException {
        // Record a genuine exchange's answer, then replay it on a new connection: the new nonce makes it wrong.
        String recordedNonce;
        String recordedMac;
        try (Socket s = raw()) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            frame(out, "{\"type\":\"hello\",\"version\":1}");
            JsonNode challenge = read(in);
            recordedNonce = Auth.nonce();
            recordedMac = AUTH.proof("client", challenge.get("nonce").asText(), recordedNonce);
            frame(out, "{\"type\":\"auth\",\"version\":1,\"nonce\":\"" + recordedNonce + "\",\"mac\":\""
                + recordedMac + "\"}");
            assertThat(read(in).get("type").asText()).isEqualTo("welcome");
        }
        try (Socket s = raw()) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            frame(out, "{\"type\":\"hello\",\"version\":1}");
            read(in);
            frame(out, "{\"type\":\"auth\",\"version\":1,\"nonce\":\"" + recordedNonce + "\",\"mac\":\""
                + recordedMac + "\"}");
            JsonNode reply = read(in);
            assertThat(reply.get("type").asText()).isEqualTo("error");
            assertThat(reply.get("message").asText()).contains("authentication failed");
        }
    }

    @Test
    void aClientThatSaysNothingIsClosedAndOthersAreServedMeanwhile() throws IOException {
        try (Socket silent = raw()) {
            assertServerStillServes(20300); // served while the silent one holds its connection
            assertThat(drain(silent)).contains("no message within");
        }
        // The session ends just after it closed the connection: await it rather than race it.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (server.activeSessions() != 0) {
            assertThat(System.nanoTime()).as("sessions released in time").isLessThan(deadline);
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    @Test
    void plansBeyondTheLimitsOrOnTakenPortsAreRefused() throws IOException {
        try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
            Plan flood = new Plan(List.of("udp"), 4, 20400, List.of(Level.parse("5M")), 1_000_000_000L, 0, 0, 64,
                "127.0.0.1");
            assertThatThrownBy(() -> client.negotiate(flood, 1, Map.of())).hasMessageContaining("exceeds");
        }
        try (ControlClient first = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000);
             ControlClient second = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
            first.negotiate(plan(20500), 1, Map.of());
            assertThatThrownBy(() -> second.negotiate(plan(20502), 2, Map.of()))
                .hasMessageContaining("in use by another session");
        }
        assertServerStillServes(20500); // freed when the first session ended
    }

    @Test
    void wrongCommandsAfterThePlanAreRefusedNotCrashing() throws IOException {
        try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
            client.negotiate(plan(20600), 1, Map.of());
            ObjectNode msg = ControlChannel.message("begin-step");
            msg.put("step", 0);
            msg.putArray("windowBits").add(64).add(64).add(64).add(64);
            assertThatThrownBy(() -> client.request(msg, "ok")).hasMessageContaining("no transport is open");
        }
        assertServerStillServes(20600);
    }

    /** Says hello and proves the secret on a raw connection, as a genuine controller would. */
    private static void authenticate(DataOutputStream out, DataInputStream in) throws IOException {
        frame(out, "{\"type\":\"hello\",\"version\":1}");
        String clientNonce = Auth.nonce();
        String mac = AUTH.proof("client", read(in).get("nonce").asText(), clientNonce);
        frame(out, "{\"type\":\"auth\",\"version\":1,\"nonce\":\"" + clientNonce + "\",\"mac\":\"" + mac + "\"}");
        assertThat(read(in).get("type").asText()).isEqualTo("welcome");
    }

    private static String planMessage(int basePort) throws IOException {
        ObjectNode msg = ControlChannel.message("plan");
        msg.put("runId", 1);
        msg.set("plan", ControlChannel.mapper().valueToTree(plan(basePort)));
        return ControlChannel.mapper().writeValueAsString(msg);
    }

    private static final String CLOCK = "{\"type\":\"clock\",\"version\":1,\"seq\":0}";

    @Test
    void aClockRequestBeforeAuthenticationOrThePlanIsRefused() throws IOException {
        try (Socket s = raw()) {
            frame(new DataOutputStream(s.getOutputStream()), CLOCK);
            assertThat(drain(s)).contains("expected 'hello', got 'clock'").doesNotContain("t2");
        }
        try (Socket s = raw()) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            frame(out, "{\"type\":\"hello\",\"version\":1}");
            read(new DataInputStream(s.getInputStream()));
            frame(out, CLOCK);
            assertThat(drain(s)).contains("expected 'auth', got 'clock'").doesNotContain("t2");
        }
        try (Socket s = raw()) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            authenticate(out, new DataInputStream(s.getInputStream()));
            frame(out, CLOCK);
            assertThat(drain(s)).contains("expected 'plan', got 'clock'").doesNotContain("t2");
        }
        assertServerStillServes(20700);
    }

    @Test
    void malformedClockFieldsAreRefused() throws IOException {
        String[] badSeq = {null, "\"1\"", "-1", "1.5", "2147483648", "{}", "[0]"};
        for (String seq : badSeq) {
            try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
                client.negotiate(plan(20800), 1, Map.of());
                ObjectNode msg = ControlChannel.message("clock");
                if (seq != null) {
                    msg.set("seq", ControlChannel.mapper().readTree(seq));
                }
                assertThatThrownBy(() -> client.request(msg, "clock")).as("seq %s", seq)
                    .hasMessageContaining("field 'seq'");
            }
        }
        assertServerStillServes(20800);
    }

    /**
     * Requests are answered one at a time and nothing is kept between them, so a controller that floods clock
     * requests and never reads the replies is held back by TCP: once the replies fill the socket buffers, the
     * server stops reading, and the flood stalls after a bounded number of bytes (the kernel's buffers, not the
     * server's heap). A server that queued replies or requests would keep reading and pass the cap.
     */
    @Test
    void aClockFloodIsHeldBackByTcpNotByMemory() throws IOException {
        // Four socket buffers lie between the flood and the server (each side's send and receive): at most
        // tcp_wmem/tcp_rmem max each, 4 MiB + 32 MiB here; measured on loopback the stall comes after about 6 MB.
        long capBytes = 256L << 20;
        long stallNs = TimeUnit.MILLISECONDS.toNanos(300);
        long written = 0;
        try (SocketChannel ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", server.port()))) {
            DataOutputStream out = new DataOutputStream(ch.socket().getOutputStream());
            DataInputStream in = new DataInputStream(ch.socket().getInputStream());
            authenticate(out, in);
            frame(out, planMessage(20900));
            assertThat(read(in).get("type").asText()).isEqualTo("plan-ok");

            byte[] json = CLOCK.getBytes(StandardCharsets.UTF_8);
            ByteBuffer burst = ByteBuffer.allocate((4 + json.length) * 4096);
            while (burst.hasRemaining()) {
                burst.putInt(json.length).put(json);
            }
            burst.flip();
            ch.configureBlocking(false);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            long stalledAt = 0;
            while (true) {
                if (!burst.hasRemaining()) {
                    burst.rewind();
                }
                int n = ch.write(burst);
                written += n;
                long now = System.nanoTime();
                assertThat(written).as("bytes the server took in").isLessThan(capBytes);
                assertThat(now).as("the flood stalls in time").isLessThan(deadline);
                if (n > 0) {
                    stalledAt = 0;
                } else if (stalledAt == 0) {
                    stalledAt = now;
                } else if (now - stalledAt > stallNs) {
                    break; // nothing taken for a while: every buffer on the way is full
                } else {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
            }
            assertServerStillServes(21000); // other sessions are served while this one is stuck writing
        }
        // Closing with replies unread resets the connection: the stuck session ends and frees its slot.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (server.activeSessions() != 0) {
            assertThat(System.nanoTime()).as("session released in time").isLessThan(deadline);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    /** Records the spec a receiver is opened with, then refuses to open: no socket is bound. */
    static final class RecordingTransport implements Transport {
        final java.util.concurrent.atomic.AtomicReference<ReceiverSpec> opened =
            new java.util.concurrent.atomic.AtomicReference<>();

        @Override
        public String name() {
            return "udp";
        }

        @Override
        public ReceiverEndpoint openReceiver(ReceiverSpec spec) {
            opened.set(spec);
            throw new UnsupportedOperationException("recorded, not opened");
        }

        @Override
        public SenderEndpoint openSender(SenderSpec spec) {
            throw new UnsupportedOperationException();
        }
    }

    private static ObjectNode planMessage(Plan plan, Map<String, String> options) {
        ObjectNode msg = ControlChannel.message("plan");
        msg.put("runId", 1);
        msg.set("plan", ControlChannel.mapper().valueToTree(plan));
        ObjectNode opts = msg.putObject("options");
        options.forEach(opts::put);
        return msg;
    }

    @Test
    void transportOptionsInThePlanAreIgnoredOnlyTheFilteredOptionsApply() throws IOException {
        RecordingTransport udp = new RecordingTransport();
        try (ControlServer recording = new ControlServer("127.0.0.1", 0, AUTH, LIMITS, Map.of("udp", udp), null);
             ControlClient client = ControlClient.connect("127.0.0.1", recording.port(), AUTH, 5_000)) {
            Map<String, String> hostile = Map.of("aeron.dir", "/etc", "evil.key", "1", "rcvbuf", "9".repeat(1_000_000),
                "udp.io", "nio");
            client.request(planMessage(plan(20700).withTransportOptions(hostile),
                Map.of("udp.io", "epoll", "aeron.dir", "/etc")), "plan-ok");
            ObjectNode open = ControlChannel.message("open");
            open.put("transport", "udp");
            assertThatThrownBy(() -> client.request(open, "ready")).hasMessageContaining("recorded, not opened");
            ReceiverSpec spec = udp.opened.get();
            assertThat(spec).isNotNull();
            assertThat(spec.options()).isEqualTo(Map.of("udp.io", "epoll"));
            assertThat(spec.plan().transportOptions().keySet()).containsExactly("udp.io");
            assertThat(spec.plan().transportOptions()).containsEntry("udp.io", "epoll");
        }
    }

    @Test
    void transportOptionsThatAreNotStringsAreRefusedCleanly() throws IOException {
        String[] bad = {"{\"udp.io\":{\"nested\":1}}", "{\"udp.io\":null}", "[\"udp.io\"]"};
        for (String options : bad) {
            try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
                ObjectNode msg = planMessage(plan(20800), Map.of());
                ((ObjectNode) msg.get("plan")).set("transportOptions", ControlChannel.mapper().readTree(options));
                assertThatThrownBy(() -> client.request(msg, "plan-ok")).as(options)
                    .hasMessageContaining("bad plan");
            }
        }
        assertServerStillServes(20800);
    }

    private static JsonNode read(DataInputStream in) throws IOException {
        int len = in.readInt();
        byte[] b = new byte[len];
        in.readFully(b);
        return ControlChannel.mapper().readTree(b);
    }
}
