package io.lossprobe.control;

import static io.lossprobe.control.ControlTesting.AUTH;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The controller's side of the handshake against servers that are not what they claim. */
@Timeout(30)
class ControlClientTest {
    /** Plays a server for one connection: reads the hello, answers with {@code reply}, records every frame after. */
    private static CompletableFuture<List<JsonNode>> fakeServer(ServerSocket listener, String reply) {
        return CompletableFuture.supplyAsync(() -> {
            List<JsonNode> received = new ArrayList<>();
            try (Socket s = listener.accept()) {
                s.setSoTimeout(10_000);
                DataInputStream in = new DataInputStream(s.getInputStream());
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                received.add(readFrame(in));
                byte[] b = reply.getBytes(StandardCharsets.UTF_8);
                out.writeInt(b.length);
                out.write(b);
                out.flush();
                while (true) {
                    received.add(readFrame(in));
                }
            } catch (java.io.EOFException | java.net.SocketException closed) {
                return received;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private static JsonNode readFrame(DataInputStream in) throws IOException {
        int length = in.readInt();
        byte[] b = new byte[length];
        in.readFully(b);
        return RawController.JSON.readTree(b);
    }

    /**
     * A host that does not know the secret (a mistyped --target, a spoofed name) cannot prove it, and the
     * controller stops there: it never sends a proof that could be attacked offline.
     */
    @Test
    void aServerWithoutTheSecretGetsNothingToAttack() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<List<JsonNode>> frames = fakeServer(listener,
                "{\"type\":\"challenge\",\"version\":" + Codec.VERSION + ",\"nonce\":\"" + Auth.nonce()
                        + "\",\"proof\":\""
                    + Auth.nonce() + "\"}");
            assertThatThrownBy(() -> ControlClient.connect("127.0.0.1", listener.getLocalPort(), AUTH, 5_000))
                .hasMessageContaining("could not prove it knows the secret")
                .hasMessageContaining("nothing was sent to it");
            List<JsonNode> got = frames.get(10, TimeUnit.SECONDS);
            assertThat(got).hasSize(1);
            assertThat(got.get(0).get("type").asText()).isEqualTo("hello");
            assertThat(got.get(0).fieldNames()).toIterable().containsExactlyInAnyOrder("type", "version", "nonce");
        }
    }

    /** An older server answers in its own terms; the controller says what is wrong in one line. */
    @Test
    void anOlderServerGetsAClearVersionError() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            fakeServer(listener, "{\"type\":\"error\",\"version\":1,\"message\":\"protocol version " + Codec.VERSION
                + " is not 1\"}");
            assertThatThrownBy(() -> ControlClient.connect("127.0.0.1", listener.getLocalPort(), AUTH, 5_000))
                .hasMessage("the server speaks control protocol 1, this controller " + Codec.VERSION + ": run the same "
                    + "lossprobe version on both hosts (server: protocol version " + Codec.VERSION + " is not 1)");
        }
    }

    /** Error text from the peer reaches the terminal without its escape sequences, bounded in length. */
    @Test
    void aServersErrorTextIsStrippedOfControlCharacters() throws Exception {
        String hostile = "\\u001b[2J\\u001b]0;owned\\u0007line one\\r\\nlossprobe: forged line\\u202e"
            + "x".repeat(2_000);
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            fakeServer(listener, "{\"type\":\"error\",\"version\":" + Codec.VERSION + ",\"message\":\"" + hostile
                + "\"}");
            Throwable e = org.assertj.core.api.Assertions.catchThrowable(() ->
                ControlClient.connect("127.0.0.1", listener.getLocalPort(), AUTH, 5_000));
            String message = e.getMessage();
            assertThat(message).startsWith("server: ?[2J?]0;owned?line one??lossprobe: forged line?");
            assertThat(message.chars().noneMatch(c -> Character.isISOControl(c) || c == 0x202e)).isTrue();
            assertThat(message.length()).isLessThan(PeerText.MAX_CHARS + 20);
        }
    }

    /** A server that accepts and then says nothing does not hold the controller past its deadline. */
    @Test
    void aSilentServerTimesOutTheWholeHandshake() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> trickle = CompletableFuture.runAsync(() -> {
                try (Socket s = listener.accept()) {
                    // A frame of 100 bytes, one byte every 300 ms: each read is quick, the whole never completes.
                    s.getOutputStream().write(new byte[] {0, 0, 0, 100});
                    for (int i = 0; i < 20; i++) {
                        s.getOutputStream().write('{');
                        s.getOutputStream().flush();
                        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(300));
                    }
                } catch (IOException e) {
                    // The controller gave up.
                }
            });
            // connect warms the handshake's code before its deadline starts (on a cold, busy JVM that took over 2 s):
            // done first here, so the stopwatch times the deadline alone.
            HandshakeWarmup.run(AUTH);
            long start = System.nanoTime();
            assertThatThrownBy(() -> ControlClient.connect("127.0.0.1", listener.getLocalPort(), AUTH, 1_000))
                .hasMessageContaining("in time");
            assertThat(System.nanoTime() - start).isLessThan(TimeUnit.MILLISECONDS.toNanos(2_500));
            trickle.get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * The control connection's ephemeral local port never keeps a receiver on this host from listening there, live or
     * in TIME_WAIT (the listener sets SO_REUSEADDR as TcpReceiver's does; the connection must too).
     */
    @Test
    void theControlConnectionsPortCanBeListenedOnLiveAndAfterClose() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Socket client = ControlClient.newSocket();
            client.connect(server.getLocalSocketAddress(), 5_000);
            Socket accepted = server.accept();
            int port = client.getLocalPort();
            assertThat(listensOn(port)).as("while the connection is live").isTrue();
            client.close(); // the controller closes first: its end waits in TIME_WAIT
            accepted.close();
            assertThat(listensOn(port)).as("while the closed connection waits in TIME_WAIT").isTrue();
        }
    }

    private static boolean listensOn(int port) throws IOException {
        try (ServerSocket l = new ServerSocket()) {
            l.setReuseAddress(true);
            l.bind(new java.net.InetSocketAddress("0.0.0.0", port), 1);
            return true;
        } catch (java.net.BindException e) {
            return false;
        }
    }
}
