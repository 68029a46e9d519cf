package io.lossprobe.cli;

import static io.lossprobe.cli.RunCommandTest.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transports;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --from A --target B} against two {@code serve}s on loopback (127.0.0.2 and 127.0.0.3): A sends to B,
 * this process only drives them. The counts are exact on every transport (lost is the receiving sockets' drops),
 * and, checked against nftables on loopback's input: every UDP datagram the result says A sent arrived at B's
 * ports from A's source address, exactly as many (GSO off, so one datagram is one packet). Ports 44740-44759.
 */
@Tag("system")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FromRunSystemTest {
    private static final String SECRET = "between two servers, a secret of 32 bytes or more";
    private static final int PORT = 44744;
    private static final String TABLE = "lossprobe_from_test";

    @TempDir
    Path dir;

    @Test
    void aServeSendsToAnotherAndTheCountsAreExact() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "counting with nftables needs root");
        assumeTrue(Nft.run("nft", "--version") == 0, "nft missing");
        StringWriter logA = new StringWriter();
        StringWriter logB = new StringWriter();
        Nft.nft("delete table ip " + TABLE, true);
        // lossprobe's UDP datagrams of 64-byte messages are 72 bytes of UDP (Aeron's frames on the same ports are
        // longer): the counter takes exactly what the udp pass sends to B's two ports.
        Nft.nft("add table ip " + TABLE, false);
        Nft.nft("add chain ip " + TABLE + " in { type filter hook input priority 0 ; }", false);
        Nft.nft("add rule ip " + TABLE + " in ip daddr 127.0.0.3 udp dport " + PORT + "-" + (PORT + 1)
            + " udp length 72 counter", false);
        try (ControlServer a = new ControlServer("127.0.0.2", 0, Auth.ofSecret(SECRET), ServerLimits.DEFAULTS,
                Transports::available, new PrintWriter(logA, true));
             ControlServer b = new ControlServer("127.0.0.3", 0, Auth.ofSecret(SECRET), ServerLimits.DEFAULTS,
                Transports::available, new PrintWriter(logB, true))) {
            Path secret = Files.writeString(dir.resolve("secret"), SECRET + "\n");
            Files.setPosixFilePermissions(secret,
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            Path out = dir.resolve("from.json");
            RunCommandTest.Outcome o = execute("run", "--from", "127.0.0.2:" + a.port(), "--target",
                "127.0.0.3:" + b.port(), "--secret-file", secret.toString(), "--transport", "udp,tcp,aeron",
                "--ports", "2", "--base-port", Integer.toString(PORT), "--levels", "4k,8k", "--duration", "500ms",
                "--warmup", "0", "--drain", "300ms", "-X", "udp.gso=off", "-o", out.toString(), "--prometheus",
                dir.resolve("from.prom").toString());
            assertThat(o.exit()).as(o.out() + o.err() + logA + logB).isZero();
            RunResult r = ResultFiles.read(out);
            TransportContractTest.assertIdentities(r);
            assertThat(r.status()).hasToString("complete");
            assertThat(r.steps()).extracting(StepResult::transport).containsExactly("udp", "udp", "tcp", "tcp",
                "aeron", "aeron");
            long udpSent = 0;
            for (StepResult s : r.steps()) {
                String what = s.transport() + " at " + s.level();
                assertThat(s.counts().received()).as(what).isPositive();
                assertThat(s.counts().scheduled()).as(what).isEqualTo(s.targetRate() / 2);
                long kernel = s.socketDrops() == null ? 0 : s.socketDrops();
                assertThat(s.counts().lost()).as(what).isEqualTo(s.transport().equals("udp") ? kernel : 0);
                assertThat(s.counts().corrupt() + s.counts().foreign()).as(what).isZero();
                // Both ends elsewhere: the delays are B's clock against A's, each estimated from here.
                assertThat(s.clockOffset()).as(what).isNotNull();
                assertThat(s.delay().uncertaintyNs()).as(what).isNotNull();
                // The sending host's figures are A's (sampled over its session), the receiving host's B's.
                assertThat(s.cpu()).as(what).isNotNull();
                assertThat(s.receiverCpu()).as(what).isNotNull();
                if (s.transport().equals("udp")) {
                    udpSent += s.counts().sent();
                }
            }
            assertThat(nftPackets()).as("datagrams nftables saw arrive at B's ports, against what A sent")
                .isEqualTo(udpSent);
            // One textfile series per pair of serves: the target label names both.
            assertThat(Files.readString(dir.resolve("from.prom")))
                .contains("target=\"127.0.0.2:" + a.port() + "->127.0.0.3:" + b.port() + "\"");
            assertThat(logA.toString()).contains("sends to 127.0.0.3:" + b.port() + " (authenticated), from ");
            Await.until("the sessions' ends: one in A's log, two in B's (the run's and A's proof)", 10_000,
                () -> finished(logA) == 1 && finished(logB) == 2, () -> logA + "\n" + logB);
        } finally {
            Nft.nft("delete table ip " + TABLE, true);
        }
    }

    @Test
    void badUsageIsOneLineAndExit2() {
        for (List<String> extra : List.of(List.of("--from", "127.0.0.2"),
            List.of("--from", "127.0.0.2", "--target", "127.0.0.3", "--reverse"),
            List.of("--from", "127.0.0.2", "--target", "127.0.0.3", "--mode", "echo"),
            List.of("--from", "127.0.0.2", "--target", "127.0.0.3", "--bind", "127.0.0.1"),
            List.of("--from", "127.0.0.3:7400", "--target", "127.0.0.3"))) {
            List<String> args = new ArrayList<>(List.of("run", "--ports", "1", "--base-port", "44740", "-o",
                dir.resolve("r.json").toString()));
            args.addAll(extra);
            RunCommandTest.Outcome o = execute(args.toArray(String[]::new));
            assertThat(o.exit()).as(extra + ": " + o.err()).isEqualTo(2);
            assertThat(o.err().strip().lines()).as(o.err()).hasSize(1);
            assertThat(o.err()).contains("--from");
        }
    }

    private static int finished(StringWriter log) {
        return log.toString().split(" finished", -1).length - 1;
    }

    private long nftPackets() throws IOException, InterruptedException {
        String listing = Nft.listing(TABLE);
        Matcher m = Pattern.compile("counter packets (\\d+)").matcher(listing);
        assertThat(m.find()).as(listing).isTrue();
        return Long.parseLong(m.group(1));
    }
}
