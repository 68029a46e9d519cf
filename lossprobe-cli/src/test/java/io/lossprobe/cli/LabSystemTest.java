package io.lossprobe.cli;

import static io.lossprobe.cli.Lab.RX;
import static io.lossprobe.cli.Lab.RX6;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Two hosts for real: {@code lossprobe serve} in one network namespace, {@code lossprobe run --target} in
 * others, joined by veth through a bridge (scripts/lab.sh), with nftables dropping and duplicating packets.
 * nftables' own counters are the ground truth lossprobe's figures must equal. Needs root, iproute2 and nftables
 * (CI has them); skipped elsewhere.
 */
@Tag("system")
@Tag("lab")
@LabLanes.First
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class LabSystemTest {
    /** The lab under LAB_PREFIX (default lp-), so a lab of one's own can run beside others; RX6 has a serve too. */
    private Lab lab;
    private Path work;
    private Path secret;

    @BeforeAll
    void upLab() throws Exception {
        lab = Lab.assumed("LAB_PREFIX", "lp-");
        assertThat(lab.run("up", "2").exit()).isZero();
        work = Files.createTempDirectory("lossprobe-lab");
        secret = work.resolve("secret");
        io.lossprobe.control.Auth.writeNewSecret(secret); // as 'lossprobe keygen' makes it: no warning in the output
        lab.serve(secret, RX, RX6);
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

    /** Runs lossprobe in a sender namespace against the server; returns the result. */
    private RunResult run(String senderNs, String name, String... args) throws Exception {
        return runTo(RX, senderNs, name, args);
    }

    /** Runs lossprobe in a sender namespace against the server at {@code target} (RX or RX6). */
    private RunResult runTo(String target, String senderNs, String name, String... args) throws Exception {
        Path out = work.resolve(name + ".json");
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", senderNs));
        cmd.addAll(Lab.java());
        cmd.addAll(List.of("run", "--target", target, "--secret-file", secret.toString(), "--quiet", "-o",
            out.toString()));
        cmd.addAll(List.of(args));
        Lab.Exec e = Lab.exec(cmd);
        assertThat(e.exit()).as(e.output()).isZero();
        RunResult r = ResultFiles.read(out);
        for (StepResult s : r.steps()) {
            for (FlowResult f : s.flows()) {
                assertThat(f.counts().received() + f.counts().lost()).isEqualTo(f.counts().sent());
                assertThat(f.counts().sent() + f.counts().sendFailed() + f.counts().behind())
                    .isEqualTo(f.counts().scheduled());
            }
        }
        return r;
    }

    /**
     * UDP datagrams of {@code payload} bytes in what nftables counted: a GSO packet carries several, and its bytes
     * are 28 (IPv4 and UDP headers) plus their payloads, so datagrams = (bytes - 28 x packets) / payload.
     */
    static long datagrams(JsonNode counters, String name, int payload) {
        return datagrams(counters, name, payload, RX);
    }

    /** {@link #datagrams(JsonNode, String, int)} of traffic to {@code target}: over IPv6 the headers are 48 bytes. */
    static long datagrams(JsonNode counters, String name, int payload, String target) {
        long packets = counters.get(name).asLong();
        long bytes = counters.get(name + "Bytes").asLong();
        long headers = Lab.udpHeaderBytes(target);
        assertThat((bytes - headers * packets) % payload).as("whole datagrams").isZero();
        return (bytes - headers * packets) / payload;
    }

    /** IPv4, then IPv6 with the same rules of scripts/lab.sh: each exactness check holds in both families. */
    @ParameterizedTest(name = "to {0}")
    @CsvSource({RX + ", 48000", RX6 + ", 52700"})
    void udpLossEqualsWhatNftablesDroppedPlusKernelDrops(String target, String basePort) throws Exception {
        assertThat(lab.run("loss", "1", "udp").exit()).isZero();
        RunResult r = runTo(target, lab.ns("tx1"), "udp-loss-" + basePort, "--transport", "udp", "--ports", "8",
            "--base-port", basePort, "--levels", "20k", "--duration", "2s", "--warmup", "0");
        StepResult s = r.steps().get(0);
        assertThat(r.plan().bindAddress()).isEqualTo(target);
        long dropped = datagrams(lab.counters(), "dropped", 64, target);
        assertThat(dropped).as("nftables dropped something").isPositive();
        long kernel = s.socketDrops() == null ? 0 : s.socketDrops();
        assertThat(s.counts().lost()).isEqualTo(dropped + kernel);
        assertThat(s.delay().basis()).isEqualTo(io.lossprobe.core.result.Latency.CLOCK_OFFSET);
        assertThat(s.delay().p50Ns()).as("one-way delay with no warm-up").isNotZero();
    }

    @Test
    void udpDuplicatesEqualWhatNftablesDuplicated() throws Exception {
        assertThat(lab.run("dup", "1").exit()).isZero();
        RunResult r = run(lab.ns("tx1"), "udp-dup", "--transport", "udp", "--ports", "8", "--base-port", "48100",
            "--levels", "20k", "--duration", "2s", "--warmup", "0", "-X", "udp.gso=off");
        StepResult s = r.steps().get(0);
        long duplicated = datagrams(lab.counters(), "duplicated", 64);
        assertThat(duplicated).isPositive();
        // Exact against what the receiving kernel delivered beyond one copy of each message...
        long delivered = s.receiverHostCounters().get("Udp.InDatagrams");
        assertThat(s.counts().duplicates()).isEqualTo(delivered - s.counts().received());
        // ...and against what the sending host's IP layer transmitted beyond the messages and the control
        // connection's segments: the clones that left it, exactly. nftables' own clone counter is only an upper
        // bound: a few of its clones never leave the sender (seen: 0-11 in ~400; the sender's Ip.OutTransmits and
        // eth0 txPackets both miss them, the receiver never sees them): see docs/two-hosts.md.
        Long transmitted = s.hostCounters().get("Ip.OutTransmits"); // kernels since 6.3
        if (transmitted != null) {
            assertThat(s.counts().duplicates()).as("clones that left the sender").isEqualTo(transmitted
                - s.hostCounters().getOrDefault("Udp.OutDatagrams", 0L)
                - s.hostCounters().getOrDefault("Tcp.OutSegs", 0L));
        }
        assertThat(s.counts().duplicates()).isLessThanOrEqualTo(duplicated);
        assertThat(s.counts().lost()).isEqualTo(s.socketDrops() == null ? 0 : s.socketDrops());
    }

    @ParameterizedTest(name = "to {0}")
    @CsvSource({RX + ", 48200", RX6 + ", 52720"})
    void tcpPaysForLossWithRetransmitsNotLoss(String target, String basePort) throws Exception {
        assertThat(lab.run("loss", "1", "tcp").exit()).isZero();
        RunResult r = runTo(target, lab.ns("tx1"), "tcp-loss-" + basePort, "--transport", "tcp", "--ports", "8",
            "--base-port", basePort, "--levels", "20k", "--duration", "2s", "--warmup", "0");
        StepResult s = r.steps().get(0);
        assertThat(lab.counters().get("dropped").asLong()).isPositive();
        assertThat(s.counts().lost()).isZero();
        assertThat(s.counts().duplicates()).isZero();
        // The flows' retransmissions from TCP_INFO (window only, read once all data was acknowledged) against the
        // sending host's own MIB counter over the same window: two kernel paths, equal exactly (the control
        // connection's segments are not dropped, so it does not retransmit).
        long perFlow = s.flows().stream().mapToLong(f -> f.transport().get("tcp.totalRetrans")).sum();
        long mib = s.hostCounters().getOrDefault("Tcp.RetransSegs", 0L);
        assertThat(perFlow).as("retransmits, nftables dropped %s", lab.counters().get("dropped")).isPositive()
            .isEqualTo(mib).isEqualTo(s.transportCounters().get("tcp.totalRetrans"));
    }

    @ParameterizedTest(name = "to {0}")
    @CsvSource({RX + ", 48300", RX6 + ", 52740"})
    void aeronReliableRepairsLossWithNaks(String target, String basePort) throws Exception {
        assertThat(lab.run("loss", "1", "udp").exit()).isZero();
        RunResult r = runTo(target, lab.ns("tx1"), "aeron-loss-" + basePort, "--transport", "aeron", "--ports", "8",
            "--base-port", basePort, "--levels", "20k", "--duration", "2s", "--warmup", "0");
        StepResult s = r.steps().get(0);
        assertThat(lab.counters().get("dropped").asLong()).isPositive();
        assertThat(s.counts().lost()).isZero();
        // Two drivers on two hosts, window only and read after the repairs settled: the NAKs the receiving driver
        // sent (its system counter and its per-stream counters) equal the NAKs the sending driver received (its
        // system and per-stream counters), exactly. The lab drops data arriving at the receiver, never a NAK.
        Map<String, Long> c = s.transportCounters();
        long rxPerStream = s.flows().stream().mapToLong(f -> f.transport().get("aeron.rcvNaksSent")).sum();
        long txPerStream = s.flows().stream().mapToLong(f -> f.transport().get("aeron.sndNaksReceived")).sum();
        assertThat(c.get("aeron.naksSent")).as(c.toString()).isPositive().isEqualTo(rxPerStream)
            .isEqualTo(c.get("aeron.naksReceived")).isEqualTo(txPerStream);
        assertThat(c.get("aeron.retransmitsSent")).isPositive();
    }

    /**
     * A blackout inside a step (every data packet into the receiver dropped for a second, then the path back, the
     * control connection untouched): the run goes on. UDP: the step's loss is exactly what nftables dropped (plus
     * socket drops), each flow lost one burst, and the next step loses nothing; TCP: nothing lost, the blackout paid
     * in retransmissions. Ports 49000 (udp) and 49020 (tcp).
     */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"udp", "tcp"})
    void aBlackoutInsideAStepIsOneBurstAndTheRunGoesOn(String transport) throws Exception {
        String basePort = transport.equals("udp") ? "49000" : "49020";
        long before = dataToRx();
        CompletableFuture<RunResult> run = CompletableFuture.supplyAsync(() -> {
            try {
                return run(lab.ns("tx1"), "blackout-" + transport, "--transport", transport, "--ports", "4",
                    "--base-port", basePort, "--levels", "2k,2k", "--duration", "4s", "--warmup", "0");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (dataToRx() < before + 500) { // a quarter of a second into the first step's 4 s window
            assertThat(System.nanoTime()).as("data flowing within 60 s").isLessThan(deadline);
            assertThat(run.isDone()).as("the run ended before its data flowed").isFalse();
            java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L);
        }
        assertThat(lab.run("blackout", "1000", transport).exit()).isZero();
        RunResult r = run.get(3, TimeUnit.MINUTES);
        assertThat(r.status()).hasToString("complete");
        StepResult first = r.steps().get(0);
        StepResult second = r.steps().get(1);
        long kernelFirst = first.socketDrops() == null ? 0 : first.socketDrops();
        long kernelSecond = second.socketDrops() == null ? 0 : second.socketDrops();
        if (transport.equals("udp")) {
            long dropped = datagrams(lab.counters(), "dropped", 64);
            System.out.println("udp blackout: nftables dropped " + dropped + ", lossprobe lost " + first.counts()
                .lost() + " (socket drops " + kernelFirst + ") in " + first.counts().lossEvents() + " bursts");
            assertThat(dropped).as("a second of 2k/s dropped").isGreaterThan(1_000);
            assertThat(first.counts().lost()).isEqualTo(dropped + kernelFirst);
            if (kernelFirst == 0) {
                for (FlowResult f : first.flows()) {
                    assertThat(f.counts().lossEvents()).as("flow %d: one burst", f.flow()).isEqualTo(1);
                }
            }
        } else {
            assertThat(lab.counters().get("dropped").asLong()).as("segments dropped").isPositive();
            assertThat(first.counts().lost()).isZero();
            assertThat(first.transportCounters().get("tcp.totalRetrans")).as("retransmissions").isPositive();
        }
        assertThat(second.counts().lost()).as("the step after the blackout").isEqualTo(kernelSecond);
        assertThat(second.counts().received()).isPositive();
    }

    private long dataToRx() throws Exception {
        return Long.parseLong(lab.run("data").output().strip().split("\\s+")[0]);
    }

    @Test
    void twoSendersAgainstOneServerAtOnce() throws Exception {
        CompletableFuture<RunResult> a = CompletableFuture.supplyAsync(() -> call(lab.ns("tx1"), "two-a", "48400"));
        CompletableFuture<RunResult> b = CompletableFuture.supplyAsync(() -> call(lab.ns("tx2"), "two-b", "48500"));
        RunResult ra = a.get(5, TimeUnit.MINUTES);
        RunResult rb = b.get(5, TimeUnit.MINUTES);
        for (RunResult r : List.of(ra, rb)) {
            StepResult s = r.steps().get(0);
            assertThat(s.counts().scheduled()).isEqualTo(20_000);
            assertThat(s.counts().corrupt()).isZero();
            assertThat(s.counts().lost()).isEqualTo(s.socketDrops() == null ? 0 : s.socketDrops());
        }
        assertThat(ra.steps().get(0).flows().get(0).port()).isEqualTo(48400);
        assertThat(rb.steps().get(0).flows().get(0).port()).isEqualTo(48500);
    }

    @Test
    void echoBetweenHostsAttributesLossToTheDirectionItHappenedIn() throws Exception {
        // Drop 1% of TCP segments arriving at the server: requests are repaired by retransmission, not lost.
        assertThat(lab.run("loss", "1", "tcp").exit()).isZero();
        RunResult r = run(lab.ns("tx1"), "echo", "--transport", "tcp", "--mode", "echo", "--ports", "4", "--base-port",
            "48700", "--levels", "4k", "--duration", "1s", "--warmup", "200ms");
        StepResult s = r.steps().get(0);
        assertThat(s.echo().identitiesHold()).isTrue();
        // Every request sent came back (TCP repairs the drops), however many a starved sender got out.
        assertThat(s.echo().requestsSent()).isPositive()
            .isEqualTo(s.counts().scheduled() - s.counts().behind() - s.counts().sendFailed());
        assertThat(s.echo().roundTripLost()).isZero();
        assertThat(s.echo().rtt().count()).isEqualTo(s.echo().requestsSent());
        assertThat(s.echo().rtt().basis()).as("a round trip needs no clock offset").isNull();
    }

    @Test
    void reverseTheServerSendsToTheController() throws Exception {
        RunResult r = run(lab.ns("tx2"), "reverse", "--reverse", "--transport", "udp,tcp", "--ports", "8",
            "--base-port", "48600", "--levels", "10k", "--duration", "2s", "--warmup", "200ms");
        assertThat(r.steps()).hasSize(2);
        for (StepResult s : r.steps()) {
            assertThat(s.counts().scheduled()).isEqualTo(20_000);
            // The server sent (how much of the schedule depends on its CPU, which is said in the step when short).
            assertThat(s.counts().sent()).isPositive();
            assertThat(s.counts().lost()).isEqualTo(s.socketDrops() == null ? 0 : s.socketDrops());
            assertThat(s.delay().basis()).isEqualTo(io.lossprobe.core.result.Latency.CLOCK_OFFSET);
        }
    }

    private static long socketDrops(StepResult s) {
        return s.socketDrops() == null ? 0 : s.socketDrops();
    }

    /**
     * How many times a test whose premise needs the sender to keep its rate (to overload a shaper, to bound a search)
     * runs before it gives up. The exact checks hold on every attempt, whatever the scheduler did; only the premise
     * can send it round again.
     */
    private static final int ATTEMPTS = 3;

    /** One attempt at a test's run (numbered from 1, so each attempt writes a file of its own). */
    @FunctionalInterface
    interface Attempt<T> {
        T run(int attempt) throws Exception;
    }

    @FunctionalInterface
    interface Check<T> {
        void check(T run) throws Exception;
    }

    /**
     * Runs {@code attempt} until {@code premise} says nothing is missing (returns null), at most {@link #ATTEMPTS}
     * times; {@code exact} holds on every attempt (a starved sender changes how much is sent, never the accounting).
     * When no attempt met the premise the test is skipped with each attempt's reason: a sender starved of CPU on a
     * busy host is a condition of the machine, which the step reports, not a result about the path.
     */
    private static <T> T untilPremiseHolds(String premiseName, Attempt<T> attempt, Check<T> exact,
                                           java.util.function.Function<T, String> premise) throws Exception {
        List<String> missed = new ArrayList<>();
        for (int i = 1; i <= ATTEMPTS; i++) {
            T r = attempt.run(i);
            exact.check(r);
            String why = premise.apply(r);
            if (why == null) {
                return r;
            }
            missed.add("attempt " + i + ": " + why);
        }
        return org.junit.jupiter.api.Assumptions.abort(premiseName + " did not hold in " + ATTEMPTS + " attempts: "
            + String.join("; ", missed));
    }

    /** How far the sender kept to its schedule, for a premise's reason. */
    static String senderState(StepResult s) {
        return String.format(java.util.Locale.ROOT, "the sender sent %d of %d scheduled (behind %d, refused %d, lag "
            + "p99 %.1f ms)%s", s.counts().sent(), s.counts().scheduled(), s.counts().behind(),
            s.counts().sendFailed(), s.senderLag() == null ? 0.0 : s.senderLag().p99Ns() / 1e6,
            s.warnings().stream().filter(w -> w.contains("sender")).map(w -> ": " + w).findFirst().orElse(""));
    }

    /** A one-step run and the lab's counters around it. */
    record LabRun(StepResult step, JsonNode before, JsonNode after) {
        long delta(String counter) {
            return after.get(counter).asLong() - before.get(counter).asLong();
        }
    }

    /** The rate tbf shapes lp-tx1's own link to, against 28k/s of 64-byte messages (about 24 Mbit/s on the wire). */
    private static final String OWN_EGRESS_RATE = "10mbit";

    /**
     * tbf on lp-tx1's own link at {@link #OWN_EGRESS_RATE} (11,792 datagrams/s) against 28k/s: a sender that gets out
     * even half its schedule still overloads it.
     */
    private LabRun overloadOwnEgress(String name, String basePort, String... options) throws Exception {
        assertThat(lab.run("clear").exit()).isZero();
        assertThat(lab.run("shape-tx", OWN_EGRESS_RATE, lab.ns("tx1")).exit()).isZero();
        List<String> args = new ArrayList<>(List.of("--transport", "udp", "--ports", "8", "--base-port", basePort,
            "--levels", "28k", "--duration", "3s", "--warmup", "0"));
        for (String o : options) {
            args.addAll(List.of("-X", o));
        }
        JsonNode before = lab.counters(); // after shape-tx: a new qdisc's drops start at 0
        RunResult r = run(lab.ns("tx1"), name, args.toArray(String[]::new));
        return new LabRun(r.steps().get(0), before, lab.counters());
    }

    /**
     * With IP_RECVERR (the default) a datagram the sender's own qdisc drops fails its send: nothing is lost, and
     * everything the sender counted as sent reached the receiving host's UDP layer (its Udp.InDatagrams, or a
     * socket's drops). Exact with and without GSO: tbf drops a GSO packet whole and the whole send fails.
     */
    @Test
    void senderEgressDropsAreSendFailuresWithRecvErr() throws Exception {
        for (String variant : List.of("off/netty", "on/netty", "off/native", "on/native")) {
            String gso = variant.substring(0, variant.indexOf('/'));
            String send = variant.substring(variant.indexOf('/') + 1);
            LabRun run = untilPremiseHolds(variant + ": the sender overloads its own egress",
                attempt -> overloadOwnEgress("egress-recverr-gso-" + gso + "-" + send + "-" + attempt,
                    gso.equals("off") ? "48800" : "48820", "udp.gso=" + gso, "udp.send=" + send),
                r -> {
                    StepResult s = r.step();
                    long delivered = s.receiverHostCounters().getOrDefault("Udp.InDatagrams", 0L);
                    assertThat(s.counts().sent()).as(variant).isEqualTo(delivered + socketDrops(s));
                    assertThat(s.counts().lost()).isEqualTo(socketDrops(s));
                    assertThat(s.attribution()).containsEntry("senderEgress", 0L).containsEntry("pathOrUnknown", 0L)
                        .containsEntry("sendRefused", s.counts().sendFailed());
                    // The engine's own reading of the qdisc is tc's, and every ENOBUFS was one of its drops. A step's
                    // host counters leave zero deltas out: an attempt whose egress dropped nothing has no key.
                    assertThat(s.hostCounters().getOrDefault("qdisc.eth0.drops", 0L))
                        .isEqualTo(r.delta("egressDrops"));
                    assertThat(r.delta("egressDrops")).isGreaterThanOrEqualTo(r.delta("sndbufErrors"));
                },
                r -> r.step().counts().sendFailed() > 0 ? null : "tbf refused nothing; " + senderState(r.step()));
            StepResult s = run.step();
            long sndbufErrors = run.delta("sndbufErrors");
            if (gso.equals("off")) {
                // One ENOBUFS per refused datagram, plus one per datagram Netty sent again after a partial
                // sendmmsg and saw accepted the second time.
                assertThat(sndbufErrors).isGreaterThanOrEqualTo(s.counts().sendFailed());
            } else if (send.equals("netty")) {
                // One ENOBUFS per refused GSO send of one or more datagrams (one send per flush: never retried).
                assertThat(sndbufErrors).isPositive().isLessThanOrEqualTo(s.counts().sendFailed());
            } else {
                // The native path sends every flow's GSO send in one sendmmsg: one refused after others is tried
                // again, as Netty does without GSO, so it may cost two ENOBUFS.
                assertThat(sndbufErrors).isPositive();
            }
        }
    }

    /**
     * With {@code udp.recverr=off} Linux reports a qdisc drop as success and only counts it in Udp SndbufErrors:
     * the messages are lost, and the attribution puts them on the sender's egress from its qdisc's counter. Without
     * GSO that is exact: lost equals the kernel's ENOBUFS count. With GSO the counters count packets of up to 64
     * datagrams, so the share is a lower bound and the warning says so.
     */
    @Test
    void withoutRecvErrSenderEgressDropsAreLostAndPutOnTheSender() throws Exception {
        LabRun silent = untilPremiseHolds("gso off: the sender overloads its own egress",
            attempt -> overloadOwnEgress("egress-silent-gso-off-" + attempt, "48840", "udp.gso=off",
                "udp.recverr=off"),
            r -> {
                StepResult s = r.step();
                assertThat(s.counts().sendFailed()).isZero();
                assertThat(s.counts().lost()).isEqualTo(r.delta("sndbufErrors") + socketDrops(s));
                assertThat(s.attribution()).containsEntry("senderEgress", s.counts().lost() - socketDrops(s))
                    .containsEntry("pathOrUnknown", 0L);
            },
            r -> r.step().counts().lost() - socketDrops(r.step()) > 0 ? null
                : "the egress dropped nothing; " + senderState(r.step()));
        assertThat(silent.step().warnings()).anySatisfy(w -> assertThat(w).contains("sending host's own egress on eth0")
            .contains("estimate"));

        LabRun run = untilPremiseHolds("gso on: the sender overloads its own egress",
            attempt -> overloadOwnEgress("egress-silent-gso-on-" + attempt, "48860", "udp.gso=on",
                "udp.recverr=off"),
            r -> {
                StepResult s = r.step();
                assertThat(s.counts().sendFailed()).isZero();
                assertThat(s.counts().lost() - socketDrops(s)).as("datagrams lost outnumber the packets dropped")
                    .isGreaterThanOrEqualTo(r.delta("egressDrops"));
                assertThat(s.attribution()).containsEntry("senderEgress", Math.min(r.delta("egressDrops"),
                    s.counts().lost() - socketDrops(s)));
            },
            r -> r.delta("egressDrops") > 0 ? null : "the egress dropped nothing; " + senderState(r.step()));
        assertThat(run.step().warnings()).anySatisfy(w -> assertThat(w).contains("UDP GSO"));
    }

    /**
     * The lab's data shaper: 5 Mbit/s into the receiver, a 5 ms queue and a 2 KiB bucket: 5,896 datagrams/s of
     * 64-byte messages, a quarter of what the lab's sender can carry (its CPU cost per message, with the veth, bridge
     * and shaper all run in the sending thread's softirqs, is 20-35 us here: at 20 Mbit/s and 30k/s it was at its own
     * CPU limit and fell behind, so the shaper was never overloaded).
     */
    private static final String[] SHAPE = {"shape", "5mbit", "5ms", "2kb"};
    private static final long SHAPED_BITS_PER_SECOND = 5_000_000;
    /**
     * A 64-byte message as tbf counts it: Ethernet 14 + IPv4 20 + UDP 8 + 64 = 106 bytes (tbf counts from the
     * Ethernet header, and without GSO a packet is one datagram).
     */
    private static final int SHAPED_PACKET_BYTES = 14 + 20 + 8 + 64;

    /** The shaped link's capacity in datagrams/s: 625,000 bytes/s over 106 bytes, 5,896.2. */
    static double shapedCapacity() {
        return SHAPED_BITS_PER_SECOND / 8.0 / SHAPED_PACKET_BYTES;
    }

    private JsonNode shaped() throws Exception {
        JsonNode c = lab.counters().get("shaped");
        assertThat(c).as("the shaper's counters").isNotNull();
        return c;
    }

    /** A run through the shaper and the shaper's counters around it. */
    record ShapedRun(RunResult result, long passed, long drops, long bytes) {
    }

    private ShapedRun throughShaper(String name, String... args) throws Exception {
        JsonNode before = shaped();
        RunResult r = run(lab.ns("tx1"), name, args);
        JsonNode after = shaped();
        return new ShapedRun(r, after.get("packets").asLong() - before.get("packets").asLong(),
            after.get("drops").asLong() - before.get("drops").asLong(),
            after.get("bytes").asLong() - before.get("bytes").asLong());
    }

    /**
     * Ground truth for the rate search: tbf shapes the data into the receiver to 5 Mbit/s, so the link carries
     * 5,896 datagrams/s of 64-byte messages; the NDR the search finds is within 3 % of that (its precision is 2 %,
     * and a rate over the capacity loses once tbf's 8 ms of queue and bucket is full, which a 1 s trial at 2 % over
     * overfills by far). Every packet the shaper passed was 106 bytes, as the capacity assumes. The premise: no trial
     * was sender-limited below the capacity, and none at 1 % or more under it lost. A smooth sender under the
     * capacity never fills the shaper; one that lost there was bunched before the shaper (a sender or a veth's
     * softirq work that lost its CPU and then caught up in a burst: beside a CPU hog, trials at 0.82-0.97 of the
     * capacity lost 26-471 with delay p99 12-27 ms). Such a search measured the lab's scheduling, not the link: it is
     * run again, and skipped with the trials named when no attempt was clean; the exact checks hold regardless.
     */
    @Test
    void theNdrFoundForUdpIsTheShapedCapacity() throws Exception {
        assertThat(lab.run(SHAPE).exit()).isZero();
        ShapedRun run = untilPremiseHolds(
            "no trial of the search was sender-limited below the capacity or lost under it",
            attempt -> throughShaper("search-" + attempt, "--transport", "udp", "--ports", "4", "--base-port", "48900",
                "-X", "udp.gso=off", "--search", "ndr,pdr", "--duration", "1s", "--warmup", "200ms", "--drain",
                "300ms", "--search-trial", "200ms", "--search-max", "12k"),
            r -> assertThat(r.bytes()).as("every packet through the shaper was a 106-byte datagram")
                .isEqualTo(r.passed() * SHAPED_PACKET_BYTES),
            r -> {
                // A trial the sender could not carry but that still sent well above the capacity overloaded the
                // link anyway (the search's first trial, at --search-max, often is one): only one below it bounds
                // the search by the sender instead of the path.
                List<io.lossprobe.core.result.SearchTrial> trials = r.result().search().get(0).trials();
                List<String> limited = trials.stream()
                    .filter(t -> t.senderLimited() && t.achievedSendRate() < 1.1 * shapedCapacity())
                    .map(t -> String.format(java.util.Locale.ROOT, "%.0f/s of %d", t.achievedSendRate(), t.rate()))
                    .toList();
                // A smooth sender under the capacity never fills the shaper's queue: a trial 1 % or more under it
                // that lost was bunched before the shaper, and lost to the lab's scheduling, not to the rate.
                limited = new ArrayList<>(limited);
                trials.stream()
                    .filter(t -> t.lost() > 0 && t.rate() <= 0.99 * shapedCapacity())
                    .map(t -> String.format(java.util.Locale.ROOT, "trial %d lost %d at %d/s (%.3f of the capacity) "
                        + "with delay p99 %.1f ms", t.trial(), t.lost(), t.rate(), t.rate() / shapedCapacity(),
                        t.delayP99Ns() == null ? 0.0 : t.delayP99Ns() / 1e6))
                    .forEach(limited::add);
                return limited.isEmpty() ? null
                    : "sender-limited trials, or trials that lost under the capacity: " + limited;
            });
        RunResult r = run.result();
        double capacity = shapedCapacity();
        io.lossprobe.core.result.SearchResult ndr = r.search().get(0);
        assertThat(ndr.criterion()).isEqualTo("ndr");
        assertThat(ndr.boundedBy()).hasToString("path");
        assertThat(ndr.converged()).isTrue();
        assertThat((double) ndr.rate()).as("NDR %s against a capacity of %.0f/s", ndr, capacity)
            .isBetween(0.97 * capacity, 1.03 * capacity);
        assertThat((double) ndr.upperBound()).isGreaterThan(0.97 * capacity);
        assertThat(ndr.width()).isLessThanOrEqualTo(0.02);
        io.lossprobe.core.result.SearchResult pdr = r.search().get(1);
        assertThat(pdr.rate()).isGreaterThanOrEqualTo(ndr.rate());
        assertThat((double) pdr.rate()).isLessThan(1.03 * capacity / (1 - 0.005));
    }

    /**
     * Above the shaped rate, what lossprobe counts lost is exactly what tbf dropped (plus the receiving sockets'
     * own drops), and what arrived is what tbf passed, whatever the sender managed to send. A first step below the
     * capacity warms both ends (JIT) without overloading the shaper; lost and passed are summed over both steps,
     * since tbf's counters cover the run. Per interval, each quarter of the window lost some. The premise is that the
     * sender kept its schedule (nothing behind, its lag at most {@link #KEPT_SCHEDULE_LAG_NS}): intervals are binned by
     * intended send time, so a late sender's quarter shows the planned rate while its datagrams went out later and
     * slower. (That is what failed here before: at 30k/s the sender was at its own CPU limit, its lag grew to 240 ms,
     * the delay rose with it and the shaper, offered only what the sender managed, dropped nothing in the first
     * quarter; no queue held the excess, the sender's own backlog of due messages did.) A run where it did not keep
     * its schedule is run again.
     */
    /**
     * The most a sender's lag may reach for it to have kept its schedule over a shaped quarter: at 8k/s against 5,896/s
     * a quarter offers 526 datagrams over the capacity, and a sender 20 ms late moves at most 160 of them into the
     * next quarter.
     */
    private static final long KEPT_SCHEDULE_LAG_NS = 20_000_000;

    @Test
    void lossAboveTheShapedRateIsExactlyWhatTheShaperDropped() throws Exception {
        assertThat(lab.run(SHAPE).exit()).isZero();
        double capacity = shapedCapacity();
        ShapedRun run = untilPremiseHolds("the sender overloads the shaper in every quarter",
            attempt -> throughShaper("over-shaped-" + attempt, "--transport", "udp", "--ports", "4", "--base-port",
                "48950", "-X", "udp.gso=off", "--levels", "3k,8k", "--duration", "1s", "--warmup", "0", "--drain",
                "300ms", "--interval", "250ms"),
            r -> {
                List<StepResult> steps = r.result().steps();
                assertThat(steps).hasSize(2);
                long lost = steps.stream().mapToLong(s -> s.counts().lost()).sum();
                long received = steps.stream().mapToLong(s -> s.counts().received()).sum();
                long kernel = steps.stream().mapToLong(LabSystemTest::socketDrops).sum();
                assertThat(lost).as("lost against tbf's drops").isEqualTo(r.drops() + kernel);
                assertThat(received + kernel).as("received against tbf's passed").isEqualTo(r.passed());
                steps.forEach(io.lossprobe.core.testing.IntervalAssertions::assertIntervalsAddUp);
            },
            r -> {
                StepResult over = r.result().steps().get(1);
                boolean kept = over.counts().behind() == 0 && over.senderLag() != null
                    && over.senderLag().maxNs() <= KEPT_SCHEDULE_LAG_NS;
                return kept ? null : "the sender did not keep its schedule at " + over.targetRate() + "/s against a "
                    + "capacity of " + Math.round(capacity) + "/s: " + senderState(over);
            });
        StepResult s = run.result().steps().get(1);
        assertThat(run.drops()).as("the shaper dropped some").isPositive();
        assertThat(s.intervals()).hasSize(4).allMatch(iv -> iv.lost() > 0);
    }

    /** Most a data message's capture on the sender's link may follow its actual-send stamp, at the median. */
    static final long STAMP_TO_WIRE_P50_NS = 50_000;
    /** Most lossprobe's transit p50 may differ from the receiver-side capture's, beyond the clock uncertainty. */
    static final long TRANSIT_AGREEMENT_NS = 20_000;

    /**
     * {@code transit} starts where the message goes to the kernel: the sender's link (a capture on the sending
     * namespace's eth0) sees each data message within {@link #STAMP_TO_WIRE_P50_NS} of its actual-send stamp at the
     * median, and lossprobe's transit p50, with its clock-offset estimate undone (both namespaces share one clock), is
     * the receiving link's capture time less that stamp, within {@link #TRANSIT_AGREEMENT_NS}. The sender-side
     * capture is the independent check (the receiver's capture and its kernel stamp are one clock reading). With the
     * flows' messages falling due at once (the default mode before it staggered them), 16 flows' median message left
     * 8 deliveries after its stamp.
     */
    @Test
    void transitStartsWhereTheCaptureSeesTheMessageLeave() throws Exception {
        assumeTrue(Lab.exec("sh", "-c", "command -v tcpdump").exit() == 0, "needs tcpdump");
        Path txCap = work.resolve("tx.pcap");
        Path rxCap = work.resolve("rx.pcap");
        String filter = "udp and dst portrange 48300-48315";
        try (Capture tx = Capture.start(lab.ns("tx1"), txCap, filter);
             Capture rx = Capture.start(lab.ns("rx"), rxCap, filter)) {
            RunResult r = run(lab.ns("tx1"), "transit-capture", "--transport", "udp", "--ports", "16", "--base-port",
                "48300", "--levels", "4k", "--duration", "2s", "--warmup", "500ms");
            StepResult s = r.steps().get(0);
            // tcpdump may still hold packets in its kernel ring (a starved tcpdump reads late), and SIGTERM would
            // lose them: stop each capture once its file holds what lossprobe counted (or 15 s have passed).
            awaitCaptured(txCap, s.counts().sent());
            awaitCaptured(rxCap, s.counts().received());
            tx.stop();
            rx.stop();
            long[] toWire = PcapStamps.sinceActualSend(txCap, 64);
            long[] arrived = PcapStamps.sinceActualSend(rxCap, 64);
            System.out.printf("capture: stamp to sender's link p50 %d ns p99 %d ns (%d captured); receiver's link "
                    + "p50 %d ns; lossprobe transit p50 %d ns, clock offset %s%n", PcapStamps.quantile(toWire, 0.5),
                PcapStamps.quantile(toWire, 0.99), toWire.length, PcapStamps.quantile(arrived, 0.5),
                s.transit().p50Ns(), s.clockOffset());
            // Never more than lossprobe counted; fewer only when tcpdump itself lost some (its ring overflows when it
            // is starved of CPU): the capture's premise.
            assertThat(toWire.length).isLessThanOrEqualTo(Math.toIntExact(s.counts().sent()));
            assertThat(arrived.length).isLessThanOrEqualTo(Math.toIntExact(s.counts().received()));
            assumeTrue(toWire.length == s.counts().sent() && arrived.length == s.counts().received(),
                "tcpdump kept every packet: " + toWire.length + " of " + s.counts().sent() + " sent, "
                    + arrived.length + " of " + s.counts().received() + " received");
            assertThat(PcapStamps.quantile(toWire, 0)).as("no message reached the link before its stamp")
                .isNotNegative();
            assertThat(PcapStamps.quantile(toWire, 0.5)).isLessThanOrEqualTo(STAMP_TO_WIRE_P50_NS);
            // One host's clocks, so the true offset is 0: the estimate must allow it, and with the estimate undone
            // lossprobe's transit is the receiving kernel's stamp less the actual send, as the capture says.
            long offset = s.clockOffset().offsetNs();
            assertThat(Math.abs(offset)).as("the clock estimate allows the true offset, 0")
                .isLessThanOrEqualTo(s.clockOffset().uncertaintyNs());
            assertThat(Math.abs(s.transit().p50Ns() + offset - PcapStamps.quantile(arrived, 0.5)))
                .isLessThanOrEqualTo(TRANSIT_AGREEMENT_NS);
        }
    }

    private static void awaitCaptured(Path pcap, long expected) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (PcapStamps.sinceActualSend(pcap, 64).length < expected && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L);
        }
    }

    /** A tcpdump in a namespace, writing nanosecond stamps, started once it says it listens. */
    private static final class Capture implements AutoCloseable {
        private final Process process;

        private Capture(Process process) {
            this.process = process;
        }

        static Capture start(String ns, Path file, String filter) throws Exception {
            Process p = new ProcessBuilder("ip", "netns", "exec", ns, "tcpdump", "-i", "eth0", "-nn", "-U", "-s",
                "96", "-B", "32768", "--time-stamp-precision=nano", "-w", file.toString(), filter)
                .redirectErrorStream(true).start();
            Capture c = new Capture(p);
            CompletableFuture<Boolean> listening = new CompletableFuture<>();
            Thread reader = new Thread(() -> { // read to the end, so tcpdump's last words never meet a closed pipe
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        if (line.contains("listening on")) {
                            listening.complete(true);
                        }
                    }
                } catch (IOException e) {
                    // tcpdump ended
                }
                listening.complete(false);
            });
            reader.setDaemon(true);
            reader.start();
            assertThat(listening.get(20, TimeUnit.SECONDS)).as("tcpdump in " + ns + " listens").isTrue();
            return c;
        }

        /** Ends the capture (SIGTERM: tcpdump writes out what it holds) and waits for it. */
        void stop() throws InterruptedException {
            process.destroy();
            assertThat(process.waitFor(10, TimeUnit.SECONDS)).as("tcpdump stopped").isTrue();
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                stop();
            }
        }
    }

    private RunResult call(String ns, String name, String basePort) {
        try {
            return run(ns, name, "--transport", "udp", "--ports", "8", "--base-port", basePort, "--levels", "10k",
                "--duration", "2s", "--warmup", "0");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
