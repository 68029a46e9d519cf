package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlClient;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.engine.ReceiveSideFactory;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code run --target 127.0.0.5:PORT --reverse --transport aeron} against a server reached at an address that is not
 * its route's preferred source (127.0.0.5, whose replies to 127.0.0.1 leave from 127.0.0.1), with real sockets and
 * an embedded media driver on each side. The controller's receivers take data from the server's address only, so
 * the server's publications must send from the address the controller reached it at.
 */
@Tag("system")
class AeronRemoteRunTest {
    private static final Auth AUTH = Auth.ofSecret("aeron from a loopback alias");
    private static final String ALIAS = "127.0.0.5";

    private static ControlServer serverAtTheAlias() throws Exception {
        return new ControlServer(ALIAS, 0, AUTH, ServerLimits.DEFAULTS, () -> Map.of("aeron", new AeronTransport()),
            null);
    }

    /**
     * Every message arrives, none foreign. Before, the publications sent from 127.0.0.1, the controller's receivers
     * dropped every frame (another source than the server's), and the run failed with "the server did not answer
     * 'open-sender' within 10000 ms".
     */
    @Test
    @Timeout(120)
    void reverseFromAServerReachedAtAnotherOfItsAddresses() throws Exception {
        Map<String, String> options = Map.of("aeron.connectTimeoutMs", "3000");
        Plan plan = AeronRuns.plan(2, 42180, List.of("2k"), 500, 100).withTransportOptions(options);
        RunResult r;
        try (ControlServer server = serverAtTheAlias();
             ControlClient client = ControlClient.connect(ALIAS, server.port(), AUTH, 5_000)) {
            client.negotiate(plan, 81, options);
            r = reverse(client, plan, options, client.peerAddress(), 81);
        }
        assertThat(r.status()).hasToString("complete");
        StepResult s = r.steps().get(0);
        assertThat(s.counts().scheduled()).isEqualTo(1000);
        assertThat(s.counts().sent()).isEqualTo(1000);
        assertThat(s.counts().received()).as("reliable Aeron on loopback delivers every message")
            .isEqualTo(s.counts().sent());
        assertThat(s.counts().foreign()).as("data from another address than the one reached").isZero();
        assertThat(s.counts().corrupt()).isZero();
        assertThat(s.counts().lost()).isZero();
    }

    /**
     * Senders that cannot open (here: the controller's receivers take data from another address than the server's,
     * so no publication connects) refuse after their connect wait, with the reason. Their opening (the driver's
     * start, then that wait) outlasts the controller's control timeout, as Aeron's default 10 s wait met the command
     * line's 10 s timeout: the controller waits for the answer all the same.
     */
    @Test
    @Timeout(120)
    void sendersThatCannotConnectSayWhyBeforeTheControllerGivesUp() throws Exception {
        // The controller's timeout is 2 s, as is the server's connect wait (after its driver starts): the controller
        // gives up 4 s after asking.
        Map<String, String> options = Map.of("aeron.connectTimeoutMs", "2000");
        Plan plan = AeronRuns.plan(2, 42190, List.of("2k"), 500, 100).withTransportOptions(options);
        try (ControlServer server = serverAtTheAlias();
             ControlClient client = ControlClient.connect(ALIAS, server.port(), AUTH, 2_000)) {
            client.negotiate(plan, 82, options);
            long startNs = System.nanoTime();
            assertThatThrownBy(() -> reverse(client, plan, options, "127.0.0.9", 82))
                .hasMessageStartingWith("server: aeron: cannot send from 127.0.0.5 to 127.0.0.1: no Aeron subscriber "
                    + "answered on 127.0.0.1:42190 within 2000 ms");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs)).as("the server's answer")
                .isBetween(2_000L, 4_500L);
        }
    }

    /** The run with the server's senders and this process's receivers, which take data from {@code from} only. */
    private static RunResult reverse(ControlClient client, Plan plan, Map<String, String> options, String from,
                                     int runId) throws Exception {
        return new RunEngine(plan, Map.of("aeron", new AeronTransport()), options, new RunListener() {
        }, StepHooks.NONE, ReceiveSideFactory.local(from), client.sendSides(), runId).run();
    }
}
