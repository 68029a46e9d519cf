package io.lossprobe.control;

import static io.lossprobe.control.ControlTesting.AUTH;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.StepStart;
import io.lossprobe.core.engine.StepTiming;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A fuzzer for the control protocol, against a real server on loopback, in bounded time: random bytes, random and
 * mutated frames before authentication, and after a genuine handshake random and mutated messages (MACed, so they
 * reach the decoder and the state machine), frames with wrong MACs, and messages out of their state. Then: the
 * server had no internal error, its heap, threads and descriptors are back where they were, and a legitimate
 * controller runs a whole step. A smaller phase throws random and mutated server replies at the controller, which
 * must fail with an I/O error, never anything else.
 *
 * <p>Seeded ({@code -Dlossprobe.fuzz.seed}); the time budget is {@code -Dlossprobe.fuzz.seconds} (default 20).
 */
@Tag("fuzz")
@Timeout(180)
class ControlFuzzTest {
    enum Kind { RANDOM_BYTES, RANDOM_FRAME, MUTATED_HELLO, BAD_MAC, RANDOM_MESSAGE, MUTATED_MESSAGE, OUT_OF_STATE }

    private static final long SEED = Long.getLong("lossprobe.fuzz.seed", System.nanoTime());
    private static final long BUDGET_NS = TimeUnit.SECONDS.toNanos(Long.getLong("lossprobe.fuzz.seconds", 20));
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final String[] TYPES = {"hello", "auth", "plan", "open", "begin-step", "count-intervals",
            "begin-window", "progress",
        "close-step", "late", "close", "open-sender", "send-begin", "send-start", "send-window", "send-progress",
        "send-abort", "send-result", "clock", "bye", "welcome", "error", "step-result", "no-such"};
    private static final String[] FIELDS = {"type", "version", "nonce", "proof", "runId", "plan", "transport", "step",
        "clockOffsetNs", "failed", "wireEnd", "seq", "windowBits", "options", "ports", "levels"};

    @Test
    void theServerSurvivesFuzzedControlInputAndStillServes() throws Exception {
        Random random = new Random(SEED);
        ControlTesting.CountingTransport transport = new ControlTesting.CountingTransport();
        ServerLimits limits = ControlTesting.LIMITS.withTimeouts(2_000, 500, 1_000);
        Map<Kind, AtomicInteger> cases = new EnumMap<>(Kind.class);
        for (Kind k : Kind.values()) {
            cases.put(k, new AtomicInteger());
        }
        java.io.StringWriter log = new java.io.StringWriter();
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, limits, ControlTesting.only(transport),
            new java.io.PrintWriter(log))) {
            assertLegitimateStep(server, 25000); // warm: the baseline includes what a first session loads
            long heapBefore = usedHeapAfterGc();
            int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
            long fdsBefore = openDescriptors();
            long start = System.nanoTime();
            long deadline = start + BUDGET_NS;
            int n = 0;
            while (System.nanoTime() - deadline < 0) {
                Kind kind = Kind.values()[random.nextInt(Kind.values().length)];
                cases.get(kind).incrementAndGet();
                runCase(server.port(), kind, new Random(random.nextLong()), 25100 + (n++ % 100) * 8);
            }
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            System.out.printf("control fuzz: seed %d, %d cases in %d ms: %s%n", SEED, n, elapsedMs, cases);
            printReasons(log.toString());

            assertThat(server.internalErrors()).as("internal errors (seed %d)", SEED).isZero();
            ControlTesting.await("sessions and connections released", 10_000,
                () -> server.activeSessions() == 0 && server.preAuthConnections() == 0 && transport.open.get() == 0);
            ControlTesting.await("threads back to the baseline", 10_000,
                () -> ManagementFactory.getThreadMXBean().getThreadCount() <= threadsBefore + 4);
            ControlTesting.await("descriptors back to the baseline", 10_000,
                () -> openDescriptors() <= fdsBefore + 16);
            long heapAfter = usedHeapAfterGc();
            assertThat(heapAfter - heapBefore).as("heap growth in bytes").isLessThan(64L << 20);
            assertLegitimateStep(server, 25000);
            // Measured here: about 280 cases a second on two shared cores; 100 a second is far from that.
            assertThat(n).as("cases in %d s", TimeUnit.NANOSECONDS.toSeconds(BUDGET_NS))
                .isGreaterThan(100 * (int) TimeUnit.NANOSECONDS.toSeconds(BUDGET_NS));
        }
    }

    /** One case, one connection: send, stop sending, read what the server says until it closes. */
    private static void runCase(int port, Kind kind, Random r, int basePort) throws IOException {
        try (RawController c = RawController.connect(port)) {
            c.socket.setSoTimeout(3_000);
            try {
                switch (kind) {
                    case RANDOM_BYTES -> c.raw(randomBytes(r, 1 + r.nextInt(8192)));
                    case RANDOM_FRAME -> c.sendBytes(randomJson(r, 0).toString().getBytes(StandardCharsets.UTF_8));
                    case MUTATED_HELLO -> c.raw(mutate(r, c.frame(("{\"type\":\"hello\",\"version\":2,\"nonce\":\""
                        + Auth.nonce() + "\"}").getBytes(StandardCharsets.UTF_8))));
                    default -> authenticated(c, kind, r, basePort);
                }
                c.socket.shutdownOutput();
            } catch (IOException closedEarly) {
                // The server refused part way: what matters is how it held up.
            }
            drainQuietly(c.socket);
        }
    }

    /** After a genuine handshake: a random prefix of the genuine sequence, then 1 to 4 fuzzed messages. */
    private static void authenticated(RawController c, Kind kind, Random r, int basePort) throws IOException {
        c.handshake(AUTH);
        List<String> prefix = genuine(basePort);
        int keep = r.nextInt(prefix.size() + 1);
        for (int i = 0; i < keep; i++) {
            c.send(prefix.get(i));
        }
        for (int i = 1 + r.nextInt(4); i > 0; i--) {
            switch (kind) {
                case BAD_MAC -> {
                    byte[] frame = c.frame(prefix.get(r.nextInt(prefix.size())).getBytes(StandardCharsets.UTF_8));
                    frame[4 + r.nextInt(frame.length - 4)] ^= (byte) (1 << r.nextInt(8));
                    c.raw(frame);
                }
                case RANDOM_MESSAGE -> c.sendBytes(randomMessage(r).toString().getBytes(StandardCharsets.UTF_8));
                case MUTATED_MESSAGE -> {
                    byte[] json = prefix.get(r.nextInt(prefix.size())).getBytes(StandardCharsets.UTF_8);
                    c.sendBytes(r.nextBoolean() ? mutate(r, json) : mutateTree(r, json));
                }
                case OUT_OF_STATE -> c.send(prefix.get(r.nextInt(prefix.size())));
                default -> throw new AssertionError(kind);
            }
        }
    }

    /** The genuine receive session's messages, in order. */
    private static List<String> genuine(int basePort) throws IOException {
        Plan plan = new Plan(List.of("udp"), 4, basePort, List.of(Level.parse("1k"), Level.parse("2k")),
            1_000_000_000L, 0, 1_000_000_000L, 64, "127.0.0.1");
        List<String> out = new ArrayList<>();
        for (Request m : new Request[] {new Request.PlanRequest(7, plan), new Request.Clock(0),
            new Request.Open("udp", 64), new Request.BeginStep(0, 12345, 1000, 1_000_000_000L),
            new Request.BeginWindow(),
            new Request.Progress(Map.of(1, new long[] {2, 4})), new Request.CloseStep(0, new long[] {5, 5, 5, 5}, null),
            new Request.Late(0), new Request.BeginStep(1, 0, 1000, 1_000_000_000L), new Request.Close(),
            new Request.OpenSender("udp", "127.0.0.1"), new Request.Punched(),
            new Request.SendBegin(0), new Request.SendStart(), new Request.SendProgress(), new Request.SendResult(),
            new Request.Bye()}) {
            out.add(new String(Codec.encode(m), StandardCharsets.UTF_8));
        }
        return out;
    }

    private static byte[] randomBytes(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    /** Byte-level mutations: flips, deletions, insertions, duplications, truncation. */
    private static byte[] mutate(Random r, byte[] in) {
        byte[] b = in.clone();
        for (int i = 1 + r.nextInt(4); i > 0 && b.length > 0; i--) {
            int at = r.nextInt(b.length);
            switch (r.nextInt(5)) {
                case 0 -> b[at] ^= (byte) (1 << r.nextInt(8));
                case 1 -> b = concat(slice(b, 0, at), slice(b, Math.min(b.length, at + 1 + r.nextInt(8)), b.length));
                case 2 -> b = concat(concat(slice(b, 0, at), randomBytes(r, 1 + r.nextInt(8))), slice(b, at, b.length));
                case 3 -> b = concat(b, slice(b, at, b.length));
                default -> b = slice(b, 0, at);
            }
        }
        return b;
    }

    private static byte[] slice(byte[] b, int from, int to) {
        return java.util.Arrays.copyOfRange(b, from, to);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Structural mutations: a field's value replaced, a field removed or added, the type swapped. */
    private static byte[] mutateTree(Random r, byte[] json) throws IOException {
        ObjectNode node = (ObjectNode) RawController.JSON.readTree(json);
        List<ObjectNode> objects = new ArrayList<>();
        collect(node, objects);
        ObjectNode target = objects.get(r.nextInt(objects.size()));
        List<String> names = new ArrayList<>();
        target.fieldNames().forEachRemaining(names::add);
        switch (r.nextInt(4)) {
            case 0 -> {
                if (!names.isEmpty()) {
                    target.set(names.get(r.nextInt(names.size())), randomJson(r, 2));
                }
            }
            case 1 -> {
                if (!names.isEmpty()) {
                    target.remove(names.get(r.nextInt(names.size())));
                }
            }
            case 2 -> target.set(FIELDS[r.nextInt(FIELDS.length)], randomJson(r, 2));
            default -> node.put("type", TYPES[r.nextInt(TYPES.length)]);
        }
        return node.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void collect(JsonNode n, List<ObjectNode> out) {
        if (n instanceof ObjectNode o) {
            out.add(o);
        }
        for (Iterator<JsonNode> it = n.elements(); it.hasNext(); ) {
            collect(it.next(), out);
        }
    }

    /** A message of a random type with random fields from the protocol's own vocabulary. */
    private static ObjectNode randomMessage(Random r) {
        ObjectNode o = NODES.objectNode();
        o.put("type", TYPES[r.nextInt(TYPES.length)]);
        for (int i = r.nextInt(4); i > 0; i--) {
            o.set(FIELDS[r.nextInt(FIELDS.length)], randomJson(r, 1));
        }
        return o;
    }

    /** Any JSON value, with the edge cases a decoder must take: extremes, fractions, control characters, depth. */
    private static JsonNode randomJson(Random r, int depth) {
        switch (r.nextInt(depth > 3 ? 6 : 9)) {
            case 0:
                return NODES.numberNode(new long[] {0, 1, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, Long.MAX_VALUE,
                    Long.MIN_VALUE, 65535, 65536, 4096}[r.nextInt(10)]);
            case 1:
                return NODES.numberNode(r.nextGaussian() * 1e6);
            case 2:
                return NODES.textNode(randomText(r));
            case 3:
                return NODES.booleanNode(r.nextBoolean());
            case 4:
                return NODES.nullNode();
            case 5:
                return NODES.numberNode(new java.math.BigInteger(80, r));
            case 6: {
                ArrayNode a = NODES.arrayNode();
                for (int i = r.nextInt(6); i > 0; i--) {
                    a.add(randomJson(r, depth + 1));
                }
                return a;
            }
            default: {
                ObjectNode o = NODES.objectNode();
                for (int i = r.nextInt(5); i > 0; i--) {
                    o.set(r.nextBoolean() ? FIELDS[r.nextInt(FIELDS.length)] : Integer.toString(r.nextInt(300)),
                        randomJson(r, depth + 1));
                }
                return o;
            }
        }
    }

    private static String randomText(Random r) {
        String[] pool = {"udp", "tcp", "aeron", "", "\u001b[2J", "a\nb", "\u202e", "1k", "max", "-1", "0x10",
            "../../etc/passwd", Auth.nonce(), "x".repeat(r.nextInt(3) == 0 ? 5000 : 10)};
        return pool[r.nextInt(pool.length)];
    }

    private static void drainQuietly(Socket s) {
        try {
            InputStream in = s.getInputStream();
            byte[] buf = new byte[8192];
            while (in.read(buf) >= 0) {
                // Discard: the server's answers are not the point; that it answers and closes is.
            }
        } catch (IOException e) {
            // Reset or timed out: done either way.
        }
    }

    /** A controller runs a whole step and says goodbye. */
    private static void assertLegitimateStep(ControlServer server, int basePort) throws Exception {
        Plan plan = new Plan(List.of("udp"), 4, basePort, List.of(Level.parse("1k")), 1_000_000_000L, 0,
            1_000_000_000L, 64, "127.0.0.1");
        try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
            client.negotiate(plan, 9, Map.of());
            try (ReceiveSide side = client.receiveSides().open(new ControlTesting.NoTransport(), plan, 9,
                client.dataKey(9), Map.of())) {
                side.beginStep(StepStart.of(plan, 0, Level.parse("1k"), StepTiming.of(plan), SendFilter.NONE,
                    client.clockOffset().offsetNs()));
                side.beginWindow();
                assertThat(side.progress()).containsExactly(0, 0, 0, 0);
                assertThat(side.closeStep(0, new long[] {3, 3, 3, 3}).flows()).hasSize(4);
            }
        }
    }

    /** How the fuzzed sessions ended, by reason (numbers and quoted values folded), most frequent first. */
    private static void printReasons(String log) {
        Map<String, Long> reasons = new java.util.TreeMap<>();
        log.lines().filter(l -> l.contains("session") && l.contains(" closed: ")).forEach(l -> {
            String why = l.substring(l.indexOf(" closed: ") + 9).replaceAll("'[^']*'", "'.'")
                .replaceAll("\"[^\"]*\"", "\".\"").replaceAll("-?\\d+", "N");
            reasons.merge(why.length() > 90 ? why.substring(0, 90) : why, 1L, Long::sum);
        });
        reasons.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(25)
            .forEach(e -> System.out.printf("  %6d  %s%n", e.getValue(), e.getKey()));
    }

    private static long usedHeapAfterGc() {
        Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }

    private static long openDescriptors() {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        } catch (IOException e) {
            return 0;
        }
    }

    /**
     * The controller's side: a fake server answers the hello with a random, mutated or truncated reply, or a
     * genuine challenge followed by garbage; the controller must fail with an I/O error and nothing else.
     */
    @Test
    void theControllerFailsCleanlyOnFuzzedReplies() throws Exception {
        Random random = new Random(SEED + 1);
        String challenge = "{\"type\":\"challenge\",\"version\":2,\"nonce\":\"" + Auth.nonce() + "\",\"proof\":\""
            + Auth.nonce() + "\"}";
        int cases = 0;
        long deadline = System.nanoTime() + Math.min(BUDGET_NS / 4, TimeUnit.SECONDS.toNanos(5));
        List<Throwable> unexpected = Collections.synchronizedList(new ArrayList<>());
        try (ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            while (System.nanoTime() - deadline < 0) {
                Random r = new Random(random.nextLong());
                byte[] reply = switch (r.nextInt(3)) {
                    case 0 -> randomBytes(r, 1 + r.nextInt(2048));
                    case 1 -> frame(mutate(r, challenge.getBytes(StandardCharsets.UTF_8)));
                    default -> frame(randomJson(r, 0).toString().getBytes(StandardCharsets.UTF_8));
                };
                Thread fake = new Thread(() -> {
                    try (Socket s = listener.accept()) {
                        s.getOutputStream().write(reply);
                        s.shutdownOutput();
                        drainQuietly(s);
                    } catch (IOException e) {
                        // The controller left first.
                    }
                });
                fake.start();
                try {
                    ControlClient.connect("127.0.0.1", listener.getLocalPort(), AUTH, 2_000).close();
                    unexpected.add(new AssertionError("connected to a fake server"));
                } catch (IOException expected) {
                    assertThat(expected.getMessage()).isNotNull();
                } catch (RuntimeException e) {
                    unexpected.add(e);
                }
                fake.join(5_000);
                cases++;
            }
        }
        System.out.printf("control fuzz (controller): seed %d, %d cases%n", SEED + 1, cases);
        assertThat(unexpected).as("seed %d", SEED + 1).isEmpty();
        assertThat(cases).isGreaterThan(100);
    }

    private static byte[] frame(byte[] payload) throws IOException {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(b);
        out.writeInt(payload.length);
        out.write(payload);
        return b.toByteArray();
    }
}
