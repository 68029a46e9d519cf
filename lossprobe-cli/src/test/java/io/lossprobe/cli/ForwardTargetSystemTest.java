package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transports;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Forward data goes to the address the authenticated control connection reached, never to the target's name
 * resolved again: a name that answers with another host once the session is up (DNS changed, or an attacker's
 * answer) must not take the data there. The controller runs in a JVM of its own that resolves names from a hosts
 * file alone ({@code jdk.net.hosts.file}) and caches nothing; {@code moving} is 127.0.0.2, where the server listens,
 * until the server has the session, then 127.0.0.3, where decoys listen on the data port for both transports. Port
 * 44660.
 */
@Tag("system")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ForwardTargetSystemTest {
    private static final String SECRET = "a name that moves once the session is up";
    private static final int PORT = 44660;

    @TempDir
    Path dir;

    @Test
    void forwardDataGoesToTheAuthenticatedAddressNotToTheNameResolvedAgain() throws Exception {
        Path names = dir.resolve("hosts");
        Files.writeString(names, "127.0.0.2 moving\n");
        StringWriter log = new StringWriter();
        AtomicLong decoyDatagrams = new AtomicLong();
        AtomicLong decoyConnections = new AtomicLong();
        try (ControlServer server = new ControlServer("127.0.0.2", 0, Auth.ofSecret(SECRET), ServerLimits.DEFAULTS,
                Transports::available, new PrintWriter(log, true));
             DatagramSocket udpDecoy = new DatagramSocket(new InetSocketAddress("127.0.0.3", PORT));
             ServerSocket tcpDecoy = new ServerSocket()) {
            tcpDecoy.bind(new InetSocketAddress("127.0.0.3", PORT));
            Thread udp = new Thread(() -> {
                byte[] buf = new byte[2048];
                try {
                    while (true) {
                        udpDecoy.receive(new DatagramPacket(buf, buf.length));
                        decoyDatagrams.incrementAndGet();
                    }
                } catch (java.io.IOException closed) {
                    // the test is over
                }
            }, "udp-decoy");
            Thread tcp = new Thread(() -> {
                try {
                    while (true) {
                        Socket s = tcpDecoy.accept();
                        decoyConnections.incrementAndGet();
                        s.close();
                    }
                } catch (java.io.IOException closed) {
                    // the test is over
                }
            }, "tcp-decoy");
            udp.setDaemon(true);
            tcp.setDaemon(true);
            udp.start();
            tcp.start();
            Path secret = Files.writeString(dir.resolve("secret"), SECRET + "\n");
            Path out = dir.resolve("run.json");
            Process run = ChildLossprobe.builder(List.of("-Djdk.net.hosts.file=" + names, "-Dsun.net.inetaddr.ttl=0"),
                "run", "--target", "moving:" + server.port(), "--secret-file", secret.toString(), "--transport",
                "udp,tcp", "--ports", "1", "--base-port", Integer.toString(PORT), "--levels", "2k", "--duration", "1s",
                "--warmup", "0", "--drain", "300ms", "--quiet", "-o", out.toString()).start();
            // The name moves once the server has the session (the TCP pass, a second later, opens after that).
            Await.until("the session", 30_000, () -> log.toString().contains("session 1 from "), log::toString);
            Path moved = dir.resolve("hosts.new");
            Files.writeString(moved, "127.0.0.3 moving\n");
            Files.move(moved, names, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            String output = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(run.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(run.exitValue()).as(output).isZero();
            RunResult r = ResultFiles.read(out);
            TransportContractTest.assertIdentities(r);
            assertThat(r.steps()).extracting(StepResult::transport).containsExactly("udp", "tcp");
            for (StepResult s : r.steps()) {
                long kernel = s.socketDrops() == null ? 0 : s.socketDrops();
                assertThat(s.counts().received()).as("%s received", s.transport()).isPositive();
                assertThat(s.counts().lost()).as("%s lost", s.transport()).isEqualTo(kernel);
            }
            assertThat(decoyDatagrams.get()).as("datagrams at the name's new address").isZero();
            assertThat(decoyConnections.get()).as("connections at the name's new address").isZero();
        }
    }
}
