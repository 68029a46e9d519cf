package io.lossprobe.control;

import static io.lossprobe.control.ControlTesting.AUTH;
import static io.lossprobe.control.ControlTesting.LIMITS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.wire.MessageAuth;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code run --from}: a serve asked to send to another host sends only to a serve that proved the secret to it;
 * the request comes once, before the senders open; receivers told another source take data from it alone and
 * answer no echo; and two sessions given one wrapped key derive the same data key.
 */
@Timeout(60)
class SendToTest {
    private ControlTesting.CountingTransport transport;
    private ControlServer sender;
    private final StringWriter senderLog = new StringWriter();

    private static final Plan PLAN = new Plan(List.of("udp"), 2, 24100, List.of(Level.parse("1k")), 200_000_000L, 0,
        100_000_000L, 64, "127.0.0.1");

    @BeforeEach
    void start() throws IOException {
        transport = new ControlTesting.CountingTransport();
        sender = new ControlServer("127.0.0.1", 0, AUTH, LIMITS, ControlTesting.only(transport),
            new PrintWriter(senderLog, true));
    }

    @AfterEach
    void stop() {
        assertThat(sender.internalErrors()).isZero();
        sender.close();
    }

    private ControlClient planned(Plan plan) throws IOException {
        ControlClient c = ControlClient.connect("127.0.0.1", sender.port(), AUTH, 5_000);
        c.negotiate(plan, 3, Map.of());
        return c;
    }

    @Test
    void aServeSendsOnlyToAServeThatProvesTheSecret() throws IOException {
        try (ControlServer impostor = new ControlServer("127.0.0.1", 0, Auth.ofSecret("another secret of 32 bytes "
                + "or more, not ours"), LIMITS, ControlTesting.only(new ControlTesting.CountingTransport()), null);
             ControlClient c = planned(PLAN)) {
            assertThatThrownBy(() -> c.sendTo("127.0.0.1", impostor.port()))
                .hasMessageContaining("cannot send to lossprobe serve at 127.0.0.1:" + impostor.port())
                .hasMessageContaining("could not prove it knows the secret");
        }
        assertThat(transport.senders.get()).as("no sender opened").isZero();
    }

    @Test
    void nothingListeningIsRefusedWithTheAddress() throws IOException {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        try (ControlClient c = planned(PLAN)) {
            assertThatThrownBy(() -> c.sendTo("127.0.0.1", closed))
                .hasMessageContaining("cannot send to lossprobe serve at 127.0.0.1:" + closed);
        }
    }

    @Test
    void theTargetIsAuthenticatedOnceAndBeforeTheSenders() throws IOException {
        try (ControlServer target = new ControlServer("127.0.0.1", 0, AUTH, LIMITS,
                ControlTesting.only(new ControlTesting.CountingTransport()), null);
             ControlClient c = planned(PLAN)) {
            ControlClient.SendTarget route = c.sendTo("127.0.0.1", target.port());
            assertThat(route.target()).isEqualTo("127.0.0.1");
            assertThat(route.source()).isEqualTo("127.0.0.1");
            assertThat(senderLog.toString()).contains("sends to 127.0.0.1:" + target.port() + " (authenticated), "
                + "from 127.0.0.1");
            assertThatThrownBy(() -> c.sendTo("127.0.0.1", target.port()))
                .hasMessageContaining("send target was set once already");
        }
        try (ControlClient c = planned(PLAN)) {
            c.request(new Request.OpenSender("udp", "127.0.0.1"), Reply.SenderReady.class);
            assertThatThrownBy(() -> c.sendTo("127.0.0.1", 9)).hasMessageContaining("'send-to' is not allowed");
        }
    }

    @Test
    void receiversToldAnotherSourceAnswerNoEcho() throws IOException {
        Plan echo = new Plan(List.of("udp"), 1, 24110, List.of(Level.parse("1k")), 200_000_000L, 0, 100_000_000L,
            64, "127.0.0.1", "echo", 0);
        try (ControlClient c = planned(echo)) {
            assertThatThrownBy(() -> c.request(new Request.Open("udp", 64, "127.0.0.9"), Reply.Ready.class))
                .hasMessageContaining("send no echo replies");
        }
    }

    @Test
    void aWrappedKeyIsTheSameKeyInEverySessionAndNeverTheDerivedOne() throws IOException {
        MessageAuth runKey = MessageAuth.random();
        try (ControlClient a = ControlClient.connect("127.0.0.1", sender.port(), AUTH, 5_000);
             ControlClient b = ControlClient.connect("127.0.0.1", sender.port(), AUTH, 5_000)) {
            MessageAuth derivedA = a.dataKey(7);
            a.negotiate(PLAN, 7, Map.of(), List.of(), runKey);
            b.negotiate(PLAN.withBasePort(24120), 7, Map.of(), List.of(), runKey);
            assertThat(a.dataKey(7).sameKeyAs(runKey)).isTrue();
            assertThat(b.dataKey(7).sameKeyAs(runKey)).isTrue();
            assertThat(derivedA.sameKeyAs(runKey)).isFalse();
        }
    }
}
