package io.lossprobe.control;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ControlClientTest {
    private static final Auth AUTH = Auth.ofSecret("correct horse battery staple");

    /**
     * The plan on the wire carries no transportOptions: a server of an earlier version refuses a plan with a field
     * it does not know, and the options a server may take travel filtered in "options".
     */
    @Test
    void thePlanSentCarriesNoTransportOptions() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<JsonNode> planMessage = CompletableFuture.supplyAsync(() -> serveOnePlan(listener));
            Plan plan = new Plan(List.of("udp"), 4, 20900, List.of(Level.parse("1k")), 1_000_000_000L, 0,
                1_000_000_000L, 64, "127.0.0.1", Plan.STREAM, 0,
                Map.of("udp.io", "nio", "aeron.dir", "/dev/shm/aeron", "rcvbuf", "1048576"));
            try (ControlClient client = ControlClient.connect("127.0.0.1", listener.getLocalPort(), AUTH, 5_000)) {
                assertThat(client.negotiate(plan, 7, plan.transportOptions())).isEqualTo("127.0.0.1");
            }
            JsonNode msg = planMessage.get(10, TimeUnit.SECONDS);
            assertThat(msg.path("plan").has("transportOptions")).isFalse();
            assertThat(msg.path("plan").path("ports").asInt()).isEqualTo(4);
            assertThat(msg.path("options").get("udp.io").asText()).isEqualTo("nio");
            assertThat(msg.path("options").has("aeron.dir")).isFalse();
        }
    }

    /** The server's side of the handshake, then the plan message as received. */
    private static JsonNode serveOnePlan(ServerSocket listener) {
        try (Socket s = listener.accept(); ControlChannel channel = new ControlChannel(s, 1 << 20)) {
            channel.receive("hello", 5_000);
            String serverNonce = Auth.nonce();
            ObjectNode challenge = ControlChannel.message("challenge");
            challenge.put("nonce", serverNonce);
            channel.send(challenge);
            String clientNonce = channel.receive("auth", 5_000).get("nonce").asText();
            ObjectNode welcome = ControlChannel.message("welcome");
            welcome.put("mac", AUTH.proof("server", clientNonce, serverNonce));
            channel.send(welcome);
            JsonNode plan = channel.receive("plan", 5_000);
            ObjectNode ok = ControlChannel.message("plan-ok");
            ok.put("bindAddress", "127.0.0.1");
            channel.send(ok);
            channel.receive("bye", 5_000);
            return plan;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
