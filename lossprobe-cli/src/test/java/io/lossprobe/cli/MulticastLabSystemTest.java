package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.engine.UnionIdentities;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.ReceiverResult;
import io.lossprobe.core.result.ReceiverUnion;
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
 * lab's switch join it and receive. nftables on each receiver's link is the ground truth: with 5 % of the group's
 * UDP dropped on one receiver's link only ({@code lab.sh mcast-loss}), that receiver's {@code lost} is exactly the
 * datagrams dropped for it, every other receiver's is 0, and every receiver received exactly what arrived at its
 * link (less what its sockets dropped). Its own lab, prefix {@code MCAST_LAB_PREFIX} (default {@code lc-}). Needs
 * root, iproute2 and nftables; skipped elsewhere.
 */
@Tag("system")
@Tag("lab")
@LabLanes.First
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
     * On both send paths: one receiver's link drops 5 % of the group, the other two none. Each receiver is
     * accounted as a unicast one is, and the step shows the worst, the one whose link dropped. And 1 % with
     * {@code udp.gso=off}, a packet per datagram, so 1 % of the packets is 1 % of the datagrams.
     */
    @ParameterizedTest(name = "udp.send={0} {2}, {3} % dropped, udp.gso={4}")
    @CsvSource({"native, 46000, any source, 5, auto", "netty, 46010, any source, 5, auto",
        "native, 46020, --source 198.18.0.11, 5, auto", "netty, 46030, --source 198.18.0.11, 5, auto",
        "native, 46040, any source, 1, off", "native, 46050, --source 198.18.0.11, 1, off"})
    void oneReceiversLossIsExactlyWhatItsLinkDroppedAndTheOthersLoseNothing(String send, String basePort,
                                                                           String source, String percent, String gso)
        throws Exception {
        // 5 % with GSO: the send paths hand the kernel up to 64 datagrams a packet (UDP GSO; a veth keeps the packet
        // whole), so 20,000 datagrams can be as few as 313 packets, where 1 % would drop none in 4 % of runs
        // (0.99^313). Without GSO, 20,000 packets: 1 % drops none in 0.99^20000 of runs (never).
        assertThat(lab.run("mcast-loss", lab.ns("mr2"), percent).exit()).isZero();
        Path out = work.resolve("mcast-" + send + "-" + basePort + ".json");
        List<String> args = new ArrayList<>(List.of("--quiet", "-X", "udp.send=" + send, "-X", "udp.gso=" + gso,
            "--base-port", basePort));
        if (source.startsWith("--source")) {
            args.addAll(List.of(source.split(" ")));
        }
        Lab.Exec e = run(out, args.toArray(String[]::new));
        assertThat(e.exit()).as(e.output()).isZero();
        StepResult step = ResultFiles.read(out).steps().get(0);
        JsonNode mcast = lab.counters().get("mcast");
        assertThat(step.receivers()).extracting(ReceiverResult::receiver)
            .containsExactly(receiver(1), receiver(2), receiver(3));
        // What was sent, whether or not a starved sender kept to the rate (a busy machine; the step says why it fell
        // behind): every figure below is exact against it.
        long sent = Lab.sentItsSchedule(step, RATE);
        for (int i = 1; i <= RECEIVERS; i++) {
            ReceiverResult rx = step.receivers().get(i - 1);
            JsonNode link = mcast.get(lab.ns("mr" + i));
            long dropped = datagrams(link.get("dropped"));
            Counts c = rx.counts();
            assertThat(c.sent()).as("%s sent", rx.receiver()).isEqualTo(sent);
            exact(rx);
            if (i == 2) {
                assertThat(dropped).as("datagrams dropped on %s's link", rx.receiver()).isPositive();
            } else {
                assertThat(dropped).as("datagrams dropped on %s's link", rx.receiver()).isZero();
            }
            assertThat(c.lost()).as("%s lost", rx.receiver()).isEqualTo(dropped);
            long arrived = datagrams(link.get("arrived"));
            if (gso.equals("off")) {
                assertThat(link.get("arrived").get("packets").asLong() + link.get("dropped").get("packets").asLong())
                    .as("%s: a packet per datagram without GSO", rx.receiver()).isEqualTo(arrived + dropped);
            }
            assertThat(c.received() + rx.socketDrops()).as("%s received (and its sockets dropped)", rx.receiver())
                .isEqualTo(arrived);
        }
        assertThat(step.worstReceiver()).isEqualTo(receiver(2));
        assertThat(step.counts()).isEqualTo(step.receivers().get(1).counts());
        // The union: one receiver lost, so nothing was lost at all of them, and its loss is the loss at some only.
        long dropped = datagrams(mcast.get(lab.ns("mr2")).get("dropped"));
        ReceiverUnion union = step.union();
        assertThat(union.exact()).isTrue();
        assertThat(union.lostAtAll()).as("lost at every receiver").isZero();
        assertThat(union.lostAtSome()).as("lost at some receivers only").isEqualTo(dropped);
        assertThat(union.anyReceived()).isEqualTo(sent);
        identities(step);
    }

    /**
     * Loss before the fan-out and at two receivers' links: 5 % of the group dropped where the sender's link enters
     * the switch ({@code lab.sh mcast-loss-sender}), so no receiver gets those, and 5 % more on 198.18.0.101's and
     * 198.18.0.102's links. Every receiver lost exactly what never reached the switch plus what its own link
     * dropped; the messages lost at every receiver are exactly those the switch never got (198.18.0.103 lost only
     * those, so the intersection is exactly them, whatever the two links' random drops share); the loss at some
     * receivers only is the two links' drops, less the few both happened to drop. With the links dropping every
     * 100th packet, 50 apart ({@code lab.sh mcast-loss-every}), they never drop the same one, so the loss at some
     * only is exactly the two links' drops added: a union made up from the receivers' counts alone (their maximum,
     * their sum, ...) cannot pass both.
     */
    @ParameterizedTest(name = "udp.send={0} links {2}")
    @CsvSource({"native, 46000, random", "netty, 46010, random", "native, 46020, apart", "netty, 46030, apart"})
    void lossBeforeTheFanOutIsLostAtEveryReceiverAndEachLinksOwnLossAtSome(String send, String basePort,
                                                                          String links) throws Exception {
        assertThat(lab.run("mcast-loss-sender", "5").exit()).isZero(); // 5 %: see the test above
        boolean apart = links.equals("apart");
        for (int i = 1; i <= 2; i++) {
            Lab.Exec rule = apart ? lab.run("mcast-loss-every", lab.ns("mr" + i), "100", i == 1 ? "0" : "50")
                : lab.run("mcast-loss", lab.ns("mr" + i), "5");
            assertThat(rule.exit()).as(rule.output()).isZero();
        }
        Path out = work.resolve("mcast-union-" + send + ".json");
        Lab.Exec e = run(out, "--quiet", "-X", "udp.send=" + send, "--base-port", basePort);
        assertThat(e.exit()).as(e.output()).isZero();
        StepResult step = ResultFiles.read(out).steps().get(0);
        JsonNode mcast = lab.counters().get("mcast");
        long beforeFanOut = datagrams(mcast.get("sender").get("dropped"));
        assertThat(beforeFanOut).as("datagrams dropped before the fan-out").isPositive();
        long[] linkDrops = new long[RECEIVERS];
        // What was sent, whether or not a starved sender kept to the rate: nothing here needs it to.
        long sent = step.receivers().get(0).counts().sent();
        assertThat(sent).isPositive();
        for (int i = 1; i <= RECEIVERS; i++) {
            ReceiverResult rx = step.receivers().get(i - 1);
            JsonNode link = mcast.get(lab.ns("mr" + i));
            linkDrops[i - 1] = datagrams(link.get("dropped"));
            exact(rx);
            assertThat(rx.counts().sent()).isEqualTo(sent);
            assertThat(linkDrops[i - 1] > 0).as("%s's link dropped", rx.receiver()).isEqualTo(i < 3);
            assertThat(rx.counts().lost()).as("%s lost: before the fan-out, and on its link", rx.receiver())
                .isEqualTo(beforeFanOut + linkDrops[i - 1]);
            assertThat(rx.counts().received() + rx.socketDrops()).as("%s received", rx.receiver())
                .isEqualTo(datagrams(link.get("arrived")));
        }
        ReceiverUnion union = step.union();
        assertThat(union.receivers()).isEqualTo(RECEIVERS);
        assertThat(union.exact()).isTrue();
        assertThat(union.sent()).isEqualTo(sent);
        assertThat(union.lostAtAll()).as("lost at every receiver: what the switch never got")
            .isEqualTo(beforeFanOut);
        if (apart) {
            assertThat(union.lostAtSome()).as("lost at some receivers only: the two links' drops, none shared")
                .isEqualTo(linkDrops[0] + linkDrops[1]);
        } else {
            assertThat(union.lostAtSome()).as("lost at some receivers only: the two links' drops, less those both "
                + "dropped").isBetween(Math.max(linkDrops[0], linkDrops[1]), linkDrops[0] + linkDrops[1]);
        }
        assertThat(union.anyReceived()).isEqualTo(sent - beforeFanOut);
        identities(step);
        assertThat(step.warnings()).noneMatch(w -> w.contains("union"));
    }

    /**
     * The union's identities (docs/multicast.md) over the step and each flow, against the receivers' own counts:
     * exact sums, and the bounds the receivers' losses put on the union and intersection.
     */
    private static void identities(StepResult step) {
        ReceiverUnion u = step.union();
        UnionIdentities.check(u.sent(), u.allReceived(), u.anyReceived(), u.lostAnywhere(), u.lostAtAll(),
            u.lostAtSome(), step.receivers().stream().map(ReceiverResult::counts).toList());
        assertThat(u.flows()).hasSize(4);
        long sent = 0;
        long atAll = 0;
        long anywhere = 0;
        for (ReceiverUnion.Flow f : u.flows()) {
            assertThat(f.exact()).isTrue();
            UnionIdentities.check(f.sent(), f.allReceived(), f.anyReceived(), f.lostAnywhere(), f.lostAtAll(),
                f.lostAtSome(), step.receivers().stream().map(r -> r.flows().get(f.flow()).counts()).toList());
            sent += f.sent();
            atAll += f.lostAtAll();
            anywhere += f.lostAnywhere();
        }
        assertThat(List.of(sent, atAll, anywhere)).as("the flows' unions add up to the step's")
            .containsExactly(u.sent(), u.lostAtAll(), u.lostAnywhere());
    }

    /**
     * Source-specific multicast from a second address of the sender's host (198.18.0.12, added for the test): the
     * senders bind to {@code --source}, so every receiver, joined for that source only, receives every datagram.
     * Sent from the route's source 198.18.0.11, as before the senders bound to it, the kernel would hand them none
     * (it filters by source): every receiver would lose all. A {@code --source} this host does not have is refused
     * before any traffic, with one line.
     */
    @org.junit.jupiter.api.Test
    void aSourceSpecificRunSendsFromItsSource() throws Exception {
        String tx = lab.ns("tx1");
        assertThat(Lab.exec("ip", "-n", tx, "addr", "add", "198.18.0.12/24", "dev", "eth0").exit()).isZero();
        try {
            for (String send : List.of("native", "netty")) {
                assertThat(lab.run("clear").exit()).isZero();
                Path out = work.resolve("mcast-second-source-" + send + ".json");
                Lab.Exec e = run(out, "--quiet", "--base-port", "46040", "--source", "198.18.0.12", "-X",
                    "udp.send=" + send);
                assertThat(e.exit()).as(e.output()).isZero();
                StepResult step = ResultFiles.read(out).steps().get(0);
                JsonNode mcast = lab.counters().get("mcast");
                for (int i = 1; i <= RECEIVERS; i++) {
                    ReceiverResult rx = step.receivers().get(i - 1);
                    exact(rx);
                    long arrived = datagrams(mcast.get(lab.ns("mr" + i)).get("arrived"));
                    // All the senders sent (a starved sender may send fewer than RATE) arrived at every link.
                    assertThat(arrived).as("arrived at %s's link (%s)", rx.receiver(), send)
                        .isEqualTo(rx.counts().sent()).isPositive();
                    assertThat(rx.counts().received() + rx.socketDrops()).as("%s received (%s)", rx.receiver(),
                        send).isEqualTo(arrived);
                }
            }
        } finally {
            Lab.exec("ip", "-n", tx, "addr", "del", "198.18.0.12/24", "dev", "eth0");
        }
        assertThat(lab.run("clear").exit()).isZero();
        Lab.Exec refused = run(work.resolve("mcast-foreign-source.json"), "--quiet", "--base-port", "46050",
            "--source", "198.18.0.12");
        assertThat(refused.exit()).as(refused.output()).isEqualTo(2);
        assertThat(refused.output().strip()).isEqualTo("lossprobe: --source 198.18.0.12 is not an address of this "
            + "host: the group's datagrams leave from it, and the receivers take them from it only");
        JsonNode mcast = lab.counters().get("mcast");
        for (int i = 1; i <= RECEIVERS; i++) {
            assertThat(datagrams(mcast.get(lab.ns("mr" + i)).get("arrived"))).isZero();
        }
    }

    /**
     * The identities of the measurement contract that can fail, for one receiver and each of its flows (of 4); also
     * for the other multicast lab tests.
     */
    static void exact(ReceiverResult rx) {
        MulticastLab.exact(rx, 4);
    }
}
