package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlClient;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two controllers run Aeron against one server at once, one reliable and one not: each session gets transport
 * instances of its own, so neither shares the other's driver or options (a shared AeronTransport refused the second
 * with "receiver and sender of one Aeron transport need the same options", or ran it on the first's driver).
 */
@Tag("system")
class AeronRemoteSessionsTest {
    private static final Auth AUTH = Auth.ofSecret("aeron sessions, one secret for both");

    private static RunResult runAgainst(ControlServer server, int basePort, Map<String, String> options) {
        Plan plan = AeronRuns.plan(2, basePort, List.of("2k"), 500, 100).withTransportOptions(options);
        int runId = basePort * 17;
        try (ControlClient client = ControlClient.connect("127.0.0.1", server.port(), AUTH, 10_000)) {
            AeronTransport local = new AeronTransport();
            client.negotiate(plan, runId, options, List.of(local));
            return new RunEngine(plan, Map.of("aeron", local), options, new RunListener() {
            }, StepHooks.NONE, client.receiveSides(), "127.0.0.1", runId).run();
        } catch (Exception e) {
            throw new CompletionException(e);
        }
    }

    @Test
    @Timeout(120)
    void concurrentSessionsWithOtherAeronOptionsEachGetTheirOwn() throws Exception {
        try (ControlServer server = new ControlServer("127.0.0.1", 0, AUTH, ServerLimits.DEFAULTS,
            () -> Map.of("aeron", new AeronTransport()), null)) {
            CompletableFuture<RunResult> reliable = CompletableFuture.supplyAsync(() ->
                runAgainst(server, 44700, Map.of()));
            CompletableFuture<RunResult> unreliable = CompletableFuture.supplyAsync(() ->
                runAgainst(server, 44720, Map.of("aeron.reliable", "false", "aeron.termLength", "64k")));
            RunResult a = reliable.get(90, TimeUnit.SECONDS);
            RunResult b = unreliable.get(90, TimeUnit.SECONDS);
            for (RunResult r : List.of(a, b)) {
                assertThat(r.status()).hasToString("complete");
                StepResult s = r.steps().get(0);
                assertThat(s.counts().received()).as("nothing lost on loopback").isEqualTo(s.counts().sent());
            }
            // Each receiving side ran under its own session's options, reported from the server.
            assertThat(a.environment().transportSettings()).containsEntry("aeron.remote.reliable", 1L)
                .containsEntry("aeron.remote.termLength", 1L << 20);
            assertThat(b.environment().transportSettings()).containsEntry("aeron.remote.reliable", 0L)
                .containsEntry("aeron.remote.termLength", 64L << 10);
        }
    }
}
