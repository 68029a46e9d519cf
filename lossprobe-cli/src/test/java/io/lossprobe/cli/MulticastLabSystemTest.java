package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.ReceiverResult;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.StepResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Raw UDP any-source multicast in the lab ({@code scripts/lab.sh mcast 3}): the controller in the sender namespace
 * sends every flow to group 239.255.0.1 (TTL 1), and three {@code lossprobe serve}s in receiver namespaces on the
 * lab's switch join it and receive. nftables on each receiver's link is the ground truth: with 1 % of the group's
 * UDP dropped on one receiver's link only ({@code lab.sh mcast-loss}), that receiver's {@code lost} is exactly the
 * datagrams dropped for it, every other receiver's is 0, and every receiver received exactly what arrived at its
 * link (less what its sockets dropped). Its own lab, prefix {@code MCAST_LAB_PREFIX} (default {@code lc-}). Needs
 * root, iproute2 and nftables; skipped elsewhere.
 */
@Tag("system")
@Tag("lab")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class MulticastLabSystemTest {
    private static final String GROUP = "239.255.0.1";
    private static final int RECEIVERS = 3;
    private static final int SIZE = 64;
    private static final int RATE = 20_000;
    private Lab lab;
    private Path work;
    private Path secret;

    @BeforeAll
    void upLab() throws Exception {
        work = Files.createTempDirectory("lossprobe-mcast-lab");
        secret = work.resolve("secret");
        lab = MulticastLab.up("MCAST_LAB_PREFIX", "lc-", RECEIVERS, secret);
    }

    @AfterAll
    void downLab() throws Exception {
        if (lab != null) {
            lab.down();
        }
    }

    @BeforeEach
    void clearRules() throws Exception {
        assertThat(lab.run("clear").exit()).isZero();
    }

    private static String receiver(int i) {
        return MulticastLab.receiver(i);
    }

    /** lossprobe run in the sender's namespace to the group, every lab receiver given, with no warm-up. */
    private Lab.Exec run(Path out, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", lab.ns("tx1")));
        cmd.addAll(Lab.java());
        cmd.addAll(List.of("run", "--multicast", GROUP, "--secret-file", secret.toString(), "-o", out.toString(),
            "--transport", "udp", "--levels", "20k", "--duration", "1s", "--warmup", "0", "--ports", "4"));
        for (int i = 1; i <= RECEIVERS; i++) {
            cmd.addAll(List.of("--receiver", receiver(i)));
        }
        cmd.addAll(List.of(args));
        return Lab.exec(cmd);
    }

    /** Datagrams in an nftables count of {@code SIZE}-byte ones: a GSO packet is one packet of many datagrams. */
    private static long datagrams(JsonNode count) {
        long packets = count.get("packets").asLong();
        long bytes = count.get("bytes").asLong();
        assertThat((bytes - 28 * packets) % SIZE).as("whole datagrams in %s", count).isZero();
        return (bytes - 28 * packets) / SIZE;
    }

    /**
     * On both send paths: one receiver's link drops 1 % of the group, the other two none. Each receiver is
     * accounted as a unicast one is, and the step shows the worst, the one whose link dropped.
     */
    @ParameterizedTest(name = "udp.send={0} {2}")
    @CsvSource({"native, 46000, any source", "netty, 46010, any source", "native, 46020, --source 198.18.0.11",
        "netty, 46030, --source 198.18.0.11"})
    void oneReceiversLossIsExactlyWhatItsLinkDroppedAndTheOthersLoseNothing(String send, String basePort,
                                                                           String source) throws Exception {
        assertThat(lab.run("mcast-loss", lab.ns("mr2"), "1").exit()).isZero();
        Path out = work.resolve("mcast-" + send + "-" + basePort + ".json");
        List<String> args = new ArrayList<>(List.of("--quiet", "-X", "udp.send=" + send, "--base-port", basePort));
        if (source.startsWith("--source")) {
            args.addAll(List.of(source.split(" ")));
        }
        Lab.Exec e = run(out, args.toArray(String[]::new));
        assertThat(e.exit()).as(e.output()).isZero();
        StepResult step = ResultFiles.read(out).steps().get(0);
        JsonNode mcast = lab.counters().get("mcast");
        assertThat(step.receivers()).extracting(ReceiverResult::receiver)
            .containsExactly(receiver(1), receiver(2), receiver(3));
        for (int i = 1; i <= RECEIVERS; i++) {
            ReceiverResult rx = step.receivers().get(i - 1);
            JsonNode link = mcast.get(lab.ns("mr" + i));
            long dropped = datagrams(link.get("dropped"));
            Counts c = rx.counts();
            assertThat(c.sent()).as("%s sent", rx.receiver()).isEqualTo(RATE);
            exact(rx);
            if (i == 2) {
                assertThat(dropped).as("datagrams dropped on %s's link", rx.receiver()).isPositive();
            } else {
                assertThat(dropped).as("datagrams dropped on %s's link", rx.receiver()).isZero();
            }
            assertThat(c.lost()).as("%s lost", rx.receiver()).isEqualTo(dropped);
            long arrived = datagrams(link.get("arrived"));
            assertThat(c.received() + rx.socketDrops()).as("%s received (and its sockets dropped)", rx.receiver())
                .isEqualTo(arrived);
        }
        assertThat(step.worstReceiver()).isEqualTo(receiver(2));
        assertThat(step.counts()).isEqualTo(step.receivers().get(1).counts());
    }

    /**
     * Source-specific multicast for a source that is not the sender: the group arrives at every receiver's link,
     * and no receiver's socket takes any of it (the kernel filters by source), so every receiver lost all.
     */
    @org.junit.jupiter.api.Test
    void aSourceSpecificJoinForAnotherSourceReceivesNothing() throws Exception {
        Path out = work.resolve("mcast-wrong-source.json");
        Lab.Exec e = run(out, "--quiet", "--base-port", "46040", "--source", "198.18.0.12", "--drain", "200ms");
        assertThat(e.exit()).as(e.output()).isZero();
        StepResult step = ResultFiles.read(out).steps().get(0);
        JsonNode mcast = lab.counters().get("mcast");
        for (int i = 1; i <= RECEIVERS; i++) {
            ReceiverResult rx = step.receivers().get(i - 1);
            assertThat(datagrams(mcast.get(lab.ns("mr" + i)).get("arrived"))).as("arrived at %s's link", rx.receiver())
                .isEqualTo(RATE);
            assertThat(rx.counts().received()).as("%s received", rx.receiver()).isZero();
            assertThat(rx.counts().lost()).as("%s lost", rx.receiver()).isEqualTo(RATE);
            assertThat(rx.counts().foreign()).as("%s foreign", rx.receiver()).isZero();
        }
    }

    private static void exact(ReceiverResult rx) {
        MulticastLab.exact(rx, 4);
    }
}
