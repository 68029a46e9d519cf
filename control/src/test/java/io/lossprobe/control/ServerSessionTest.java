package io.lossprobe.control;

import static io.lossprobe.control.ControlTesting.AUTH;
import static io.lossprobe.control.ControlTesting.LIMITS;
import static io.lossprobe.control.ControlTesting.plan;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.accounting.SequenceTracker;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.Transport;
import java.io.IOException;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The session's state machine and the server's limits: a session runs its plan and nothing beyond it, and a plan
 * beyond the limits (levels, run time, bytes/s, memory) is refused with the reason before anything is allocated.
 */
@Timeout(60)
class ServerSessionTest {
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

    private ControlClient planned(Plan plan) throws IOException {
        ControlClient c = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000);
        c.negotiate(plan, 3, Map.of());
        return c;
    }

    /** A whole receive session, message by message: the sequence the engine sends is served. */
    @Test
    void theEnginesSequenceIsServed() throws IOException {
        Plan twoSteps = new Plan(List.of("udp"), 4, 24000, List.of(Level.parse("1k"), Level.parse("2k")),
            1_000_000_000L, 0, 1_000_000_000L, 64, "127.0.0.1");
        try (ControlClient c = planned(twoSteps)) {
            c.request(new Request.Clock(0), Reply.ClockReply.class);
            c.request(new Request.Open("udp", 64), Reply.Ready.class);
            for (int step = 0; step < 2; step++) {
                c.request(new Request.BeginStep(step, 0, 1000, 1_000_000_000L), Reply.Ok.class);
                c.request(new Request.BeginWindow(), Reply.Ok.class);
                assertThat(c.request(new Request.Progress(Map.of(1, new long[] {3, 5})), Reply.Received.class)
                    .received()).containsExactly(0, 0, 0, 0);
                Reply.StepResult r = c.request(new Request.CloseStep(step, new long[] {9, 9, 9, 9}, null),
                    Reply.StepResult.class);
                assertThat(r.flows()).hasSize(4);
                assertThat(r.hostCounters()).isNotNull();
                c.request(new Request.Late(step), Reply.LateCounts.class);
            }
            c.request(new Request.Close(), Reply.Ok.class);
            assertThat(transport.open.get()).isZero();
        }
    }

    /** A whole reverse session: the server's senders run the plan's step and report it. */
    @Test
    void theEnginesReverseSequenceIsServed() throws IOException {
        Plan plan = new Plan(List.of("udp"), 2, 24050, List.of(Level.parse("1k")), 200_000_000L, 0, 100_000_000L, 64,
            "127.0.0.1");
        try (ControlClient c = planned(plan)) {
            c.request(new Request.OpenSender("udp", "127.0.0.1"), Reply.SenderReady.class);
            assertThat(c.request(new Request.SendBegin(0), Reply.SendReady.class).warmupNs()).isZero();
            c.request(new Request.SendStart(), Reply.Ok.class);
            c.request(new Request.SendWindow(), Reply.Ok.class);
            ControlTesting.await("sent", 5_000, () -> {
                try {
                    return c.request(new Request.SendProgress(), Reply.Sent.class).done();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Reply.SendOutcome o = c.request(new Request.SendResult(), Reply.SendOutcome.class);
            assertThat(o.counts()).hasNumberOfRows(2);
            assertThat(o.counts()[0][1] + o.counts()[1][1]).as("sent, 1k/s for 200 ms").isBetween(150L, 250L);
            assertThatThrownBy(() -> c.request(new Request.SendBegin(0), Reply.SendReady.class))
                .hasMessageContaining("step 0 out of order");
        }
        ControlTesting.await("senders closed", 5_000, () -> transport.senders.get() == 0);
    }

    /**
     * A server whose senders take longer to fail than the controller's control timeout (Aeron waits 10 s by default
     * for its subscribers, as long as the command line's control timeout): the controller waits what the transport
     * declares beyond its own timeout, so the server's reason arrives, one line naming the transport and the
     * addresses, instead of "the server did not answer 'open-sender'".
     */
    @Test
    void aSenderThatCannotOpenSaysWhyBeforeTheControllerGivesUp() throws Exception {
        // The controller's timeout is 2 s, the senders' wait 3 s: the controller gives up 5 s after asking.
        SlowRefusal slow = new SlowRefusal(3_000);
        try (ControlServer s = new ControlServer("127.0.0.1", 0, AUTH, LIMITS, ControlTesting.only(slow), null);
             ControlClient c = ControlClient.connect("127.0.0.1", s.port(), AUTH, 2_000)) {
            Plan plan = plan(42190);
            c.negotiate(plan, 5, Map.of(), List.of(slow));
            long startNs = System.nanoTime();
            assertThatThrownBy(() -> c.sendSides().open(slow, plan, 5, c.dataKey(5), Map.of()))
                .isInstanceOf(ControlProtocolException.class)
                .hasMessage("server: udp: cannot send from 127.0.0.1 to 127.0.0.1: no receiver answered within "
                    + "3000 ms");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs)).as("the server's answer")
                .isBetween(3_000L, 5_000L);
            assertThat(s.internalErrors()).isZero();
        }
    }

    /** Senders that wait {@code waitMs} for receivers that never answer (as Aeron's connect wait), then fail. */
    private static final class SlowRefusal extends ControlTesting.NoTransport {
        private final long waitMs;
        private final java.util.concurrent.CountDownLatch neverAnswered = new java.util.concurrent.CountDownLatch(1);

        SlowRefusal(long waitMs) {
            this.waitMs = waitMs;
        }

        @Override
        public long senderOpenTimeoutMs(Plan plan, Map<String, String> options) {
            return waitMs;
        }

        @Override
        public io.lossprobe.core.transport.SenderEndpoint openSender(io.lossprobe.core.transport.SenderSpec spec)
            throws Exception {
            if (!neverAnswered.await(waitMs, TimeUnit.MILLISECONDS)) {
                throw new IOException("no receiver answered within " + waitMs + " ms");
            }
            throw new AssertionError("no one answers in this test");
        }
    }

    /** A step of the plan's one level, 1k over its 1 s window. */
    private static Request.BeginStep begin(int step) {
        return new Request.BeginStep(step, 0, 1000, 1_000_000_000L);
    }

    /** Each refused with the rule it broke; each ends the session, so every case gets a fresh one. */
    @Test
    void messagesOutOfTheirStateOrOrderAreRefused() throws IOException {
        Object[][] cases = {
            {List.of(), new Request.Open("tcp", 64), "transport 'tcp' is not in the plan"},
            {List.of(), begin(0), "'begin-step' is not allowed with nothing open"},
            {List.of(), new Request.SendStart(), "'send-start' is not allowed with nothing open"},
            {List.of(new Request.Open("udp", 64), new Request.Close()), new Request.Open("udp", 64),
                "the receivers of 'udp' were opened once already"},
            {List.of(new Request.Open("udp", 64)), begin(1), "step 1 out of order"},
            {List.of(new Request.Open("udp", 64)), new Request.Late(0), "step 0 has not closed"},
            {List.of(new Request.Open("udp", 64), begin(0), new Request.BeginWindow()),
                new Request.BeginWindow(), "the window of step 0 began already"},
            {List.of(new Request.Open("udp", 64), begin(0)),
                new Request.CloseStep(0, new long[3], null), "wireEnd must hold 4 numbers"},
            {List.of(new Request.Open("udp", 64), begin(0),
                new Request.CloseStep(0, new long[4], null)), begin(0), "step 0 out of order"},
            {List.of(new Request.Open("udp", 64), begin(0)),
                new Request.Progress(Map.of(9, new long[] {1, 2})), "'failed' has a bad entry for flow 9"},
            {List.of(new Request.Open("udp", 64), begin(0)),
                new Request.Progress(Map.of(0, new long[] {5, 2})), "empty or inverted range"},
            {List.of(), new Request.Hello(2, Auth.nonce()), "'hello' belongs to the handshake"},
            {List.of(), new Request.PlanRequest(1, plan(24100)), "'plan' is not allowed with nothing open"},
        };
        for (Object[] c : cases) {
            try (ControlClient client = planned(plan(24000))) {
                for (Object before : (List<?>) c[0]) {
                    client.request((Request) before, Reply.class);
                }
                assertThatThrownBy(() -> client.request((Request) c[1], Reply.class)).as(c[2].toString())
                    .hasMessageContaining((String) c[2]);
            }
            ControlTesting.await("session released", 5_000, () -> server.activeSessions() == 0);
        }
    }

    /** The windows are the server's to derive: a begin-step that names them is not a begin-step. */
    @Test
    void windowsComeFromThePlanNeverFromTheController() throws IOException {
        try (RawController c = RawController.connect(server.port())) {
            c.handshake(AUTH);
            c.send(RawController.planMessage(1, plan(24200)));
            c.read();
            c.send("{\"type\":\"open\",\"transport\":\"udp\",\"messageSize\":64,\"source\":null}");
            c.read();
            c.send("{\"type\":\"begin-step\",\"step\":0,\"clockOffsetNs\":0,\"rate\":1000,"
                + "\"windowNs\":1000000000,\"windowBits\":[4194304,4194304,4194304,4194304]}");
            JsonNode reply = c.read();
            assertThat(reply.get("type").asText()).isEqualTo("error");
            assertThat(reply.get("message").asText()).isEqualTo("bad message: unknown field 'windowBits'");
        }
        // What the server derives is the engine's choice for the plan, a few KiB here.
        assertThat(SequenceTracker.windowsFor(plan(24200), Level.parse("1k"))).containsOnly(4096);
    }

    private static Plan planOf(int levels, String rate, long durationNs, long drainNs, int size, int ports) {
        return new Plan(List.of("udp"), ports, 24300, Collections.nCopies(levels, Level.parse(rate)), durationNs, 0,
            drainNs, size, "127.0.0.1");
    }

    @Test
    void plansBeyondTheLimitsAreRefusedWithTheReason() throws IOException {
        long s = TimeUnit.SECONDS.toNanos(1);
        Object[][] cases = {
            {planOf(257, "1k", s, 0, 64, 4), "257 levels exceed this server's limit of 256"},
            {planOf(65_536, "1k", s, 0, 64, 4), "65536 levels exceed"},
            {planOf(100, "1k", 50 * s, 0, 64, 4), "the run takes 50s x 100 levels x 1 transports, beyond this "
                + "server's limit of 3600s"},
            {planOf(1, "500k", s, 0, 1024, 4), "level 500k of 1024-byte messages exceeds this server's limit of "
                + "268435456 bytes/s"},
            {planOf(1, "2M", s, 0, 64, 4), "level 2M exceeds this server's limit of 1000000 messages/s"},
            {planOf(1, "1k", s, 0, 64, 65), "ports 65 exceeds this server's limit of 64"},
        };
        for (Object[] c : cases) {
            try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 5_000)) {
                assertThatThrownBy(() -> client.negotiate((Plan) c[0], 1, Map.of())).hasMessageContaining(
                    (String) c[1]);
            }
        }
    }

    /**
     * Memory: the sequence windows of the largest step, each flow's loss ranges at their bound (320 KiB: 16,384
     * late-arrival ranges and 4,096 lost ranges of two longs each) plus what the transport maps, against
     * --max-memory.
     */
    @Test
    void aPlanNeedingMoreMemoryThanAllowedIsRefused() {
        long s = TimeUnit.SECONDS.toNanos(1);
        assertThat(io.lossprobe.core.accounting.SequenceTracker.rangeBytesPerFlow()).isEqualTo(320L << 10);
        ServerLimits limits = LIMITS.withPlanLimits(1_000_000, 64, 60 * s, 256, TimeUnit.HOURS.toNanos(1),
            1L << 40, 28L << 20);
        // 64 flows at 1M/s with a 30 s drain: 60 s of sequence numbers per flow, 2^20 bits = 128 KiB each; with the
        // ranges 448 KiB a flow, 28 MiB.
        Plan big = planOf(1, "1M", s, 30 * s, 64, 64);
        Map<String, Transport> none = Map.of();
        assertThat(limits.refuse(big, none, Map.of())).isNull();
        Plan bigger = planOf(1, "1M", s, 60 * s, 64, 40);
        assertThat(limits.refuse(bigger, none, Map.of())).as("40 flows x (2^22 bits + 320 KiB)")
            .isEqualTo("the plan needs 32.5 MiB on this host (sequence windows 32.5 MiB with the loss ranges and the "
                + "intervals' histograms, transport buffers 0.0 MiB), beyond this server's limit of 28.0 MiB");
        Transport mapping = new ControlTesting.NoTransport() {
            @Override
            public long memoryBytes(Plan plan, Map<String, String> options) {
                return 6L << 20;
            }
        };
        assertThat(limits.refuse(big, Map.of("udp", mapping), Map.of())).contains("transport buffers 6.0 MiB");
    }

    private static Plan searchPlan(int basePort, long intervalNs, List<Integer> sizes) {
        long s = TimeUnit.SECONDS.toNanos(1);
        return new Plan(List.of("udp"), 4, basePort, List.of(Level.parse("1k")), s, 0, s / 10, sizes.get(0),
            "127.0.0.1", Plan.STREAM, 0, Map.of(), sizes,
            new io.lossprobe.core.plan.SearchPlan(List.of("ndr"), 0.005, 0.02, 400, 50_000, s / 5, 10, List.of()),
            intervalNs);
    }

    /**
     * A search's steps carry their own rates and windows: any rate within the search's, over its trial or full
     * length, is served; a rate beyond them, another window, or a size the plan has not, ends the session.
     */
    @Test
    void aSearchsStepsAreServedWithinItsRatesAndLengthsOnly() throws IOException {
        try (ControlClient c = planned(searchPlan(24400, 0, List.of(64, 1400)))) {
            c.request(new Request.Open("udp", 1400), Reply.Ready.class);
            c.request(new Request.BeginStep(0, 0, 12_345, 200_000_000L), Reply.Ok.class);
            c.request(new Request.CloseStep(0, new long[4], null), Reply.StepResult.class);
            c.request(new Request.BeginStep(1, 0, 50_000, 1_000_000_000L), Reply.Ok.class);
            c.request(new Request.CloseStep(1, new long[4], null), Reply.StepResult.class);
        }
        Object[][] cases = {
            {new Request.BeginStep(0, 0, 50_001, 200_000_000L), "a step at 50001 messages/s for 200000000 ns is not "
                + "in the plan"},
            {new Request.BeginStep(0, 0, 399, 200_000_000L), "is not in the plan"},
            {new Request.BeginStep(0, 0, 1000, 300_000_000L), "is not in the plan"},
            {new Request.BeginStep(22, 0, 1000, 200_000_000L), "step 22 out of order"},
        };
        for (Object[] k : cases) {
            try (ControlClient c = planned(searchPlan(24400, 0, List.of(64, 1400)))) {
                c.request(new Request.Open("udp", 64), Reply.Ready.class);
                assertThatThrownBy(() -> c.request((Request) k[0], Reply.class)).hasMessageContaining((String) k[1]);
            }
            ControlTesting.await("session released", 5_000, () -> server.activeSessions() == 0);
        }
        try (ControlClient c = planned(searchPlan(24400, 0, List.of(64)))) {
            assertThatThrownBy(() -> c.request(new Request.Open("udp", 128), Reply.class))
                .hasMessageContaining("message size 128 is not in the plan");
        }
    }

    /** Intervals only when the plan has them, once a step, before its window; the counts come back with it. */
    @Test
    void intervalsAreCountedWhenThePlanHasThem() throws IOException {
        try (ControlClient c = planned(searchPlan(24500, 250_000_000L, List.of(64)))) {
            c.request(new Request.Open("udp", 64), Reply.Ready.class);
            c.request(begin(0), Reply.Ok.class);
            c.request(new Request.CountIntervals(System.nanoTime()), Reply.Ok.class);
            Reply.StepResult r = c.request(new Request.CloseStep(0, new long[4], null), Reply.StepResult.class);
            assertThat(r.intervals().received()).hasSize(4).containsOnly(0L);
            c.request(begin(1), Reply.Ok.class);
            c.request(new Request.BeginWindow(), Reply.Ok.class); // no warm-up: sampled before the first message
            c.request(new Request.CountIntervals(System.nanoTime()), Reply.Ok.class);
            assertThatThrownBy(() -> c.request(new Request.CountIntervals(0), Reply.class))
                .hasMessageContaining("the intervals of step 1 were set already");
        }
        try (ControlClient c = planned(plan(24600))) {
            c.request(new Request.Open("udp", 64), Reply.Ready.class);
            c.request(begin(0), Reply.Ok.class);
            assertThatThrownBy(() -> c.request(new Request.CountIntervals(0), Reply.class))
                .hasMessageContaining("the plan has no intervals");
        }
    }

    @Test
    void searchesBeyondTheLimitsAreRefused() {
        Map<String, Transport> none = Map.of();
        Plan search = searchPlan(24700, 0, List.of(64));
        assertThat(LIMITS.refuse(search, none, Map.of())).isNull();
        Plan toMax = search.withSearch(new io.lossprobe.core.plan.SearchPlan(List.of("ndr"), 0.005, 0.02, 400, 0,
            200_000_000L, 10, List.of()));
        assertThat(LIMITS.refuse(toMax, none, Map.of())).contains("needs a highest rate (--search-max)");
        Plan tooFast = search.withSearch(new io.lossprobe.core.plan.SearchPlan(List.of("ndr"), 0.005, 0.02, 400,
            5_000_000, 200_000_000L, 10, List.of()));
        assertThat(LIMITS.refuse(tooFast, none, Map.of())).contains("level 5M exceeds");
        Plan manyTrials = search.withSearch(new io.lossprobe.core.plan.SearchPlan(List.of("ndr"), 0.005, 0.02, 400,
            50_000, 200_000_000L, 300, List.of()));
        assertThat(LIMITS.refuse(manyTrials, none, Map.of())).isEqualTo("301 steps per transport (levels, search "
            + "trials and steps, for each message size) exceed this server's limit of 256 levels");
        Plan bigSize = searchPlan(24700, 0, List.of(64, 60_000));
        assertThat(LIMITS.refuse(bigSize, none, Map.of())).contains("of 60000-byte messages exceeds");
    }
}
