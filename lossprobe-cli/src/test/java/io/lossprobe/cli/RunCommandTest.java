package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.testing.Scratch;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

class RunCommandTest {
    record Outcome(int exit, String out, String err) {
    }

    static Outcome execute(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = LossprobeCommand.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Outcome(exit, out.toString(), err.toString());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "--size 16|below the 48-byte header",
        "--size 70000|largest UDP payload",
        "--levels abc|'abc'",
        "--levels 30k,,1M|empty",
        "--ports 0|--ports must be at least 1",
        "--ports 70000|past port 65535",
        "--base-port 65530|past port 65535",
        "--base-port 0|--base-port",
        "--duration 0|--duration must be greater than 0",
        "--duration forever|--duration",
        "--warmup -1s|--warmup",
        "--duration 18446744073709551617ns|--duration is too long",
        "--duration 1e999999999s|--duration is too long",
        "--warmup 100000h|--warmup must be at most 24h",
        "--drain 9223372036854775807ns|--drain must be at most 24h",
        "--size 99999999999999999999|--size is too large",
        "--size 9007199254740992MiB|--size is too large",
        "--size -1KiB|--size must not be negative",
        "--size -64|Expected parameter for option '--size' but found '-64'",
        "--rcvbuf 4096MiB|rcvbuf must be",
        "--sndbuf 0|sndbuf must be",
        "--ports abc|--ports",
        "--transport carrier-pigeon|unknown transport 'carrier-pigeon'",
        "-o /nonexistent-dir/results.json|cannot write results",
        "--policy ../docs/examples/policy.json --prometheus /nonexistent-dir/x.prom|cannot write --prometheus",
        "--no-such-option|--no-such-option",
        "--reverse|--reverse needs --target",
        "--mode chatter|--mode must be stream or echo",
        "--target host:99999|port must be between 1 and 65535",
        "-X aeron.relaible=false|unknown transport option 'aeron.relaible' (did you mean aeron.reliable?); known: "
            + "aeron.connectTimeoutMs, aeron.dir, aeron.flowControl, aeron.group, aeron.groupTag, aeron.interface, "
            + "aeron.mdc, aeron.mdcReceivers, aeron.mtu, aeron.reliable",
        "-X tcp.nodelay=maybe|-X tcp.nodelay=maybe: tcp.nodelay must be true or false, not 'maybe'",
        "-X rcvbuf=4GB|-X rcvbuf=4GB: rcvbuf is not a size like 64, 1KiB or 4MiB",
        "-X rcvbuf=0|rcvbuf must be 1 to",
        "-X udp.gso=sometimes|udp.gso must be one of auto, on, off",
        "-X aeron.mtu=1500|aeron.mtu must be a multiple of 32, not '1500'",
        "-X aeron.termLength=100k|aeron.termLength",
        "--target 127.0.0.1:1 -X udp.rxthreads=2|did you mean udp.rxThreads?",
        "--udp-io ioctl|udp.io must be one of auto, epoll, nio, not 'ioctl'",
        "-4 -6|-4 and -6 exclude each other: give one",
        "-4 --bind ::1|-4 with the IPv6 address ::1 (--bind): give an IPv4 address or leave -4 out",
        "-6 --bind 127.0.0.1|-6 with the IPv4 address 127.0.0.1 (--bind): give an IPv6 address or leave -6 out",
        "-6 --target 127.0.0.1|-6 with the IPv4 address 127.0.0.1: give an IPv6 address or leave -6 out",
        "-4 --target [0:0::1]:7400|-4 with the IPv6 address ::1: give an IPv4 address or leave -4 out",
        "--target [::1]:1 --reverse --bind 127.0.0.1|--bind 127.0.0.1 and --target [::1]:1 are of different address "
            + "families",
        "--multicast 198.18.0.5 --receiver 198.18.0.101|--multicast 198.18.0.5 is not a multicast group (IPv4 "
            + "224.0.0.0/4, IPv6 ff00::/8; for a test use 239.255.0.0/16)",
        "--multicast 2001:2::1 --receiver 198.18.0.101|--multicast 2001:2::1 is not a multicast group",
        "--multicast 224.0.0.251 --receiver 198.18.0.101|--multicast 224.0.0.251 is a link-local control group "
            + "(224.0.0.0/24, ff01::/16, ff02::/16), which the serves refuse to join; for a test use 239.255.0.0/16",
        "--multicast ff02::1 --receiver 198.18.0.101|--multicast ff02::1 is a link-local control group",
        "--multicast group.example --receiver 198.18.0.101|--multicast takes a group address (e.g. 239.255.0.1), "
            + "not 'group.example'",
        "--multicast 239.255.0.1|--multicast needs its receivers: --receiver HOST for each 'lossprobe serve'",
        "--receiver 198.18.0.101|--receiver goes with --multicast GROUP",
        "--ttl 2|--ttl goes with --multicast GROUP",
        "--source 198.18.0.11|--source goes with --multicast GROUP",
        "--multicast 239.255.0.1 --receiver rx1 --source 239.255.0.9|--source takes this host's sending address",
        "--multicast 239.255.0.1 --receiver rx1 --source tx1|--source takes this host's sending address (e.g. "
            + "198.18.0.11), not 'tx1'",
        "--multicast 239.255.0.1 --receiver rx1 --receiver rx1:7400|--receiver rx1:7400 is given twice",
        "--multicast 239.255.0.1 --receiver rx1 --ttl 0|--ttl must be 1 to 255, not 0",
        "--multicast 239.255.0.1 --receiver rx1 --interface a/b|--interface must be an interface name",
        "--multicast 239.255.0.1 --receiver rx1 --transport tcp|--multicast sends raw UDP or Aeron: give --transport "
            + "udp or aeron (not tcp)",
        "--multicast 239.255.0.1 --receiver rx1|--multicast sends raw UDP or Aeron: give --transport udp or aeron "
            + "(not udp,tcp,aeron)",
        "--multicast 239.255.0.2 --receiver rx1 --transport aeron|--multicast 239.255.0.2: an Aeron multicast group "
            + "ends in an odd byte",
        "--multicast 239.255.0.1 --receiver rx1 --transport aeron --source 198.18.0.11|--source: Aeron's multicast "
            + "subscriptions have no source-specific join; give --transport udp",
        "--multicast 239.255.0.1 --receiver rx1 --transport aeron -X aeron.flowControl=tagged|aeron.flowControl="
            + "tagged needs the receivers' group tag: -X aeron.groupTag=N",
        "--multicast 239.255.0.1 --receiver rx1 --transport aeron -X aeron.flowControl=least|aeron.flowControl",
        "--transport aeron -X aeron.flowControl=min|aeron.flowControl goes with a multicast group",
        "-X aeron.group=239.255.0.1|-X aeron.group is set by --multicast GROUP",
        "--multicast 239.255.0.1 --receiver rx1 --target rx2|--multicast does not go with --target",
        "--multicast 239.255.0.1 --receiver rx1 --mode echo|--multicast does not go with --mode echo yet",
        "-X udp.group=239.255.0.1|-X udp.group is set by --multicast GROUP",
        "--multicast 239.255.0.1 --receiver rx1 -X udp.group=239.255.0.2|-X udp.group is set by --multicast GROUP",
        "--mdc|--mdc needs its receivers: --receiver HOST for each 'lossprobe serve' that is to take a copy",
        "--mdc --multicast 239.255.0.1 --receiver rx1|--multicast and --mdc: a run sends to a group or by "
            + "multi-destination-cast, not both",
        "--mdc --receiver 127.0.0.2|--mdc is Aeron's multi-destination-cast: give --transport aeron (not "
            + "udp,tcp,aeron)",
        "--mdc --receiver 127.0.0.2 --transport udp|--mdc is Aeron's multi-destination-cast: give --transport aeron",
        "--mdc --receiver 127.0.0.2 --transport aeron --ttl 2|--ttl goes with --multicast GROUP (--mdc sends "
            + "unicast copies)",
        "--mdc --receiver 127.0.0.2 --transport aeron --source 127.0.0.1|--source goes with --multicast GROUP",
        "--mdc --receiver 127.0.0.2 --mode echo|--mdc does not go with --mode echo yet",
        "--mdc --receiver no-such-host.invalid --transport aeron|--mdc: cannot reach no-such-host.invalid",
        "--transport aeron -X aeron.mdc=127.0.0.1|-X aeron.mdc is set by --mdc",
        "--mdc --receiver 127.0.0.2 --transport aeron -X aeron.mdcReceivers=127.0.0.2|-X aeron.mdcReceivers is set "
            + "by --mdc",
    })
    void badInputExitsTwoWithOneReadableLine(String args, String expected) {
        Outcome o = execute(("run " + args).split(" "));
        assertThat(o.exit()).as(o.err()).isEqualTo(2);
        assertThat(o.err().strip()).contains(expected).doesNotContain("Exception").doesNotContain("\tat ");
        assertThat(o.err().strip().lines().count()).as(o.err()).isEqualTo(1);
    }

    @Test
    @Timeout(60) // were the plan accepted, the run must still end
    void moreLevelsThanTheHeaderCanNumberIsBadUsage(@TempDir Path dir) {
        Path file = dir.resolve("r.json");
        String levels = String.join(",", java.util.Collections.nCopies(65_537, "1k"));
        Outcome o = execute("run", "--transport", "udp", "--ports", "1", "--base-port", "45600", "--levels", levels,
            "--duration", "10ms", "--warmup", "0", "--drain", "0", "--quiet", "-o", file.toString());
        assertThat(o.exit()).as(o.err()).isEqualTo(2);
        assertThat(o.err().strip()).contains("--levels has 65537 levels; at most 65536")
            .doesNotContain("Exception").doesNotContain("\tat ");
        assertThat(o.err().strip().lines().count()).as(o.err()).isEqualTo(1);
        assertThat(file).doesNotExist();
    }

    /** Validated -X values are taken in every form the declarations accept, and reach the transport. */
    @Test
    @Tag("system")
    @Timeout(60)
    void transportOptionsInTheirDeclaredFormsReachTheTransport(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("r.json");
        Outcome o = execute("run", "--transport", "udp", "--ports", "1", "--base-port", "45650", "--levels", "1k",
            "--duration", "100ms", "--warmup", "0", "--drain", "100ms", "--quiet", "-o", file.toString(),
            "-X", "rcvbuf=2MiB", "-X", "udp.rxThreads=1", "-X", "tcp.nodelay=false");
        assertThat(o.exit()).as(o.err()).isZero();
        assertThat(o.err()).contains("lossprobe: note: -X tcp.nodelay is for a transport this run does not use");
        RunResult r = ResultFiles.read(file);
        assertThat(r.environment().socketBuffers()).containsEntry("udp.receiveBufferRequested", 2L << 20);
        assertThat(r.environment().transportSettings()).containsEntry("udp.receiveThreads", 1L);
    }

    @Test
    void optionsListsEveryDeclaredOptionWithWhereItApplies() {
        Outcome o = execute("options");
        assertThat(o.exit()).isZero();
        assertThat(o.out()).contains("udp:", "tcp:", "aeron:");
        assertThat(o.out().lines().filter(l -> l.contains("aeron.dir")).findFirst().orElseThrow()).contains("local");
        assertThat(o.out().lines().filter(l -> l.contains("udp.gso ")).findFirst().orElseThrow()).contains("server");
    }

    @Test
    void anOutputPathThatIsADirectoryIsBadUsage(@TempDir Path dir) {
        Outcome o = execute("run", "-o", dir.toString(), "--transport", "udp");
        assertThat(o.exit()).isEqualTo(2);
        assertThat(o.err()).startsWith("lossprobe: cannot write results to");
    }

    @Test
    void helpIsThereForEveryCommand() {
        Outcome top = execute("--help");
        assertThat(top.exit()).isZero();
        assertThat(top.out()).contains("run");
        Outcome run = execute("run", "--help");
        assertThat(run.exit()).isZero();
        assertThat(run.out()).contains("--levels", "--transport", "--ports", "--base-port", "--duration", "--warmup",
            "--size", "--output", "--bind", "Exit codes");
        assertThat(execute().exit()).isEqualTo(2);
    }

    @Test
    @Tag("system")
    @Timeout(120)
    void echoModeReportsTpsAndRoundTripAndWritesHistogramLogs(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("echo.json");
        Outcome o = execute("run", "--transport", "tcp", "--mode", "echo", "--concurrency", "4", "--levels", "max",
            "--ports", "4", "--base-port", "45400", "--duration", "500ms", "--warmup", "0", "--quiet", "--hlog",
            "-o", file.toString());
        assertThat(o.exit()).as(o.err()).isZero();
        assertThat(o.out()).contains("echo: tps", "rtt mean", "lost requests 0, replies 0");
        StepResult s = ResultFiles.read(file).steps().get(0);
        assertThat(s.echo().identitiesHold()).isTrue();
        assertThat(s.echo().repliesReceived()).isPositive().isEqualTo(s.echo().rtt().count());
        Path rtt = dir.resolve("echo.tcp.step0.rtt.hlog");
        try (java.io.FileInputStream in = new java.io.FileInputStream(rtt.toFile())) {
            org.HdrHistogram.HistogramLogReader reader = new org.HdrHistogram.HistogramLogReader(in);
            org.HdrHistogram.EncodableHistogram h = reader.nextIntervalHistogram();
            assertThat(h).isNotNull();
            assertThat(((org.HdrHistogram.Histogram) h).getTotalCount()).isEqualTo(s.echo().repliesReceived());
        }
        assertThat(dir.resolve("echo.tcp.step0.delay.hlog")).exists();
        Path html = dir.resolve("echo.html");
        assertThat(execute("report", file.toString(), "-o", html.toString()).exit()).isZero();
        assertThat(java.nio.file.Files.readString(html)).contains("id=\"rtt-0\"", "tcp: round trip against TPS",
            "id=\"percentiles-rtt-0\"")
            // the percentile plot is drawn from the step's HdrHistogram log, not the summary
            .doesNotContain("run with --hlog for the full curve");
        assertThat(execute("run", "--mode", "echo", "--reverse", "--target", "x").err())
            .contains("does not go with --reverse");
        assertThat(execute("run", "--concurrency", "5").err()).contains("--concurrency goes with --mode echo");
    }

    @Test
    @Tag("system")
    @Timeout(120)
    void anEchoRunWritesAPromtoolCleanTextfileWithoutAPolicy(@TempDir Path dir) throws Exception {
        Path prom = dir.resolve("m.prom");
        Outcome o = execute("run", "--transport", "udp", "--mode", "echo", "--levels", "2k", "--ports", "2",
            "--base-port", "45700", "--duration", "300ms", "--warmup", "100ms", "--drain", "200ms", "--quiet",
            "-o", dir.resolve("e.json").toString(), "--prometheus", prom.toString());
        assertThat(o.exit()).as(o.out() + o.err()).isZero();
        String text = java.nio.file.Files.readString(prom);
        assertThat(text).containsPattern("lossprobe_last_run_round_trip_seconds\\{direction=\"forward\","
                + "mode=\"echo\",name=\"plan-[0-9a-f]{8}\",offered_rate=\"2000\",size_bytes=\"64\","
                + "target=\"local\",transport=\"udp\",quantile=\"0.99\"}")
            .contains("lossprobe_last_run_transactions_per_second{")
            .containsPattern("lossprobe_last_run_status\\{direction=\"forward\",mode=\"echo\","
                + "name=\"plan-[0-9a-f]{8}\",size_bytes=\"64\",status=\"complete\",target=\"local\"} 1.0")
            .doesNotContain("lossprobe_last_check");
        java.nio.file.Path promtool = java.nio.file.Path.of("/usr/bin/promtool");
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isExecutable(promtool), "no promtool");
        Process p = new ProcessBuilder(promtool.toString(), "check", "metrics").redirectInput(prom.toFile())
            .redirectErrorStream(true).start();
        assertThat(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(new String(p.getInputStream().readAllBytes())).isZero();
    }

    @Test
    @Tag("system")
    @Timeout(120)
    void theInlineCheckFailsTheRunWhenAThresholdBreaks(@TempDir Path dir) throws Exception {
        Path strict = dir.resolve("strict.json");
        // No rate can be achieved beyond 10x the target: a threshold that must fail.
        java.nio.file.Files.writeString(strict, "{\"defaults\": {\"minAchievedRate\": 1000000000}}");
        Path prom = dir.resolve("lossprobe.prom");
        Outcome o = execute("run", "--transport", "udp", "--ports", "2", "--base-port", "45200", "--levels", "1k",
            "--duration", "300ms", "--warmup", "0", "--quiet", "-o", dir.resolve("r.json").toString(), "--policy",
            strict.toString(), "--prometheus", prom.toString());
        assertThat(o.exit()).as(o.out() + o.err()).isEqualTo(1);
        assertThat(o.out()).contains("FAIL udp 1k");
        assertThat(java.nio.file.Files.readString(prom)).contains("lossprobe_");

        Path bad = dir.resolve("bad.json");
        java.nio.file.Files.writeString(bad, "{\"defaults\": {\"maxLoss\": 1}}");
        Outcome refused = execute("run", "--transport", "udp", "--policy", bad.toString(), "-o",
            dir.resolve("r2.json").toString());
        assertThat(refused.exit()).isEqualTo(2);
        assertThat(refused.err()).contains("unknown key 'maxLoss'");
        assertThat(dir.resolve("r2.json")).doesNotExist();
    }

    @Test
    @Tag("system")
    @Timeout(120)
    void aRunWritesResultsWhoseIdentitiesHoldAndPrintsARowPerStep(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("r.json");
        Outcome o = execute("run", "--transport", "udp", "--ports", "6", "--base-port", "45000", "--levels",
            "3k,6k", "--duration", "700ms", "--warmup", "200ms", "--quiet", "-o", file.toString(),
            "--sndbuf", "1MiB", "-X", "tcp.nodelay=false");
        assertThat(o.exit()).as(o.err()).isZero();
        assertThat(o.out()).contains("proto", "3k", "6k", "results written to");
        RunResult r = ResultFiles.read(file);
        // The answer after the rows: a sentence per transport, as the report's verdict, from the same figures.
        String verdict = r.steps().stream().allMatch(s -> s.counts().lost() == 0)
            ? "verdict: udp: no loss at any level (3k to 6k)" : "verdict: udp: loss";
        assertThat(o.out()).contains(verdict);
        assertThat(o.out().indexOf("verdict: ")).isLessThan(o.out().indexOf("results written to"));
        assertThat(r.status()).hasToString("complete");
        assertThat(r.schemaVersion()).isEqualTo(RunResult.SCHEMA_VERSION);
        assertThat(r.environment().cores()).isPositive();
        assertThat(r.plan().transportOptions()).containsExactly(Map.entry("sndbuf", "1048576"),
            Map.entry("tcp.nodelay", "false"), Map.entry("udp.io", "auto"));
        assertThat(r.steps()).hasSize(2);
        for (StepResult s : r.steps()) {
            for (FlowResult f : s.flows()) {
                Counts c = f.counts();
                assertThat(c.received() + c.lost()).isEqualTo(c.sent());
                assertThat(c.sent() + c.sendFailed() + c.behind()).isEqualTo(c.scheduled());
            }
        }
        assertThat(r.steps().get(0).counts().scheduled()).isEqualTo(2100);
    }

    @Test
    @Tag("system")
    @Timeout(60)
    void aDeviceNodeAsTheOutputIsWrittenThroughNeverReplaced(@TempDir Path dir) throws Exception {
        Path devNull = Scratch.characterDevice(dir.resolve("null"), 1, 3);
        Path devFull = Scratch.characterDevice(dir.resolve("full"), 1, 7);
        long nullNumber = Scratch.deviceNumber(devNull);
        long fullNumber = Scratch.deviceNumber(devFull);

        Outcome ok = execute("run", "--transport", "udp", "--ports", "2", "--base-port", "46900", "--levels", "1k",
            "--duration", "200ms", "--warmup", "0", "--drain", "100ms", "--quiet", "-o", devNull.toString());
        assertThat(ok.exit()).as(ok.err()).isZero();
        assertThat(ok.out()).contains("results written to " + devNull);

        Outcome full = execute("run", "--transport", "udp", "--ports", "2", "--base-port", "46900", "--levels", "1k",
            "--duration", "200ms", "--warmup", "0", "--drain", "100ms", "--quiet", "-o", devFull.toString());
        assertThat(full.exit()).as(full.err()).isEqualTo(1);
        assertThat(full.err()).contains("cannot write results to " + devFull + ": No space left on device")
            .doesNotContain("Exception").doesNotContain("\tat ");
        assertThat(full.out()).doesNotContain("results written");

        assertThat(Scratch.isCharacterDevice(devNull)).isTrue();
        assertThat(Scratch.deviceNumber(devNull)).isEqualTo(nullNumber);
        assertThat(Scratch.isCharacterDevice(devFull)).isTrue();
        assertThat(Scratch.deviceNumber(devFull)).isEqualTo(fullNumber);
        try (var listing = Files.list(dir)) {
            assertThat(listing.toList()).containsExactlyInAnyOrder(devNull, devFull);
        }
        assertThat(execute("run", "--hlog", "-o", devNull.toString()).err()).contains("give -o a file");
        Path link = Files.createSymbolicLink(dir.resolve("link.json"), devNull);
        Outcome refused = execute("run", "--transport", "udp", "-o", link.toString());
        assertThat(refused.exit()).isEqualTo(2);
        assertThat(refused.err().strip()).isEqualTo("lossprobe: cannot write results: " + link
            + " is a link to something that is not a regular file: name a device itself, not a link to it");
        assertThat(Files.isSymbolicLink(link)).isTrue();
        assertThat(Scratch.deviceNumber(devNull)).isEqualTo(nullNumber);
    }

    @Test
    @Tag("system")
    @Timeout(60)
    void aDiskThatFillsDuringTheRunStopsItWithExitOneAndTheFileSaysFailed(@TempDir Path dir) throws Exception {
        try (Scratch.Tmpfs fs = Scratch.tmpfs(dir, 256 * 1024)) {
            Path file = fs.dir().resolve("r.json");
            // The disk fills once the first results are written: during the first step's long warm-up.
            CompletableFuture<Long> filled = CompletableFuture.supplyAsync(() -> {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!Files.exists(file) && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                try {
                    return fs.fill();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Outcome o = execute("run", "--transport", "udp", "--ports", "2", "--base-port", "46910", "--levels",
                "1k,1k,1k", "--duration", "200ms", "--warmup", "2s", "--drain", "100ms", "--quiet",
                "-o", file.toString());
            assertThat(filled.get(20, TimeUnit.SECONDS)).isPositive();

            assertThat(o.exit()).as(o.err()).isEqualTo(1);
            assertThat(o.err()).contains("cannot write results to " + file + ": No space left on device")
                .contains("1 step(s) measured").doesNotContain("Exception");
            assertThat(o.out()).doesNotContain("results written");
            RunResult r = ResultFiles.read(file);
            assertThat(r.status()).hasToString("failed");
            try (var listing = Files.list(fs.dir())) {
                assertThat(listing.map(p -> p.getFileName().toString()).toList())
                    .containsExactlyInAnyOrder("r.json", "filler");
            }
        }
    }

    @Test
    @Tag("system")
    @Timeout(60)
    void histogramLogsReplaceALinkPlantedAtTheirPredictableNames(@TempDir Path dir) throws Exception {
        Path victim = Files.writeString(dir.resolve("victim"), "precious");
        Path planted = Files.createSymbolicLink(dir.resolve("r.udp.step0.delay.hlog"), victim);
        Outcome o = execute("run", "--transport", "udp", "--ports", "2", "--base-port", "46920", "--levels", "1k",
            "--duration", "200ms", "--warmup", "0", "--drain", "100ms", "--quiet", "--hlog",
            "-o", dir.resolve("r.json").toString());
        assertThat(o.exit()).as(o.err()).isZero();
        assertThat(victim).hasContent("precious");
        assertThat(Files.isSymbolicLink(planted)).isFalse();
        assertThat(Files.readString(planted)).contains("lossprobe udp step 0 delay");
    }

    @Test
    void afterAFailedWriteTheResultsSayFailedAndWhyOnceThereIsRoomAgain(@TempDir Path dir) throws Exception {
        RunResult running = ResultFiles.mapper().readValue("""
            {"schemaVersion": 2, "tool": "lossprobe", "startedAt": "2026-11-30T23:00:00Z", "status": "running",
             "plan": {"transports": ["udp"], "ports": 1, "basePort": 40000, "levels": ["1k"], "durationNs": 1,
                      "warmupNs": 0, "drainNs": 0, "messageSize": 64, "bindAddress": "127.0.0.1"},
             "steps": []}
            """, RunResult.class);
        RunResult complete = new RunResult(running.schemaVersion(), running.tool(), running.startedAt(),
            "2026-11-30T23:00:05Z", RunStatus.COMPLETE, null, null, running.plan(), null, running.steps());
        try (Scratch.Tmpfs fs = Scratch.tmpfs(dir, 64 * 1024)) {
            Path file = fs.dir().resolve("r.json");
            StringWriter err = new StringWriter();
            RunOutput output = new RunOutput(file, new PrintWriter(new StringWriter()),
                new PrintWriter(err, true), false, false);
            java.util.concurrent.atomic.AtomicInteger stops = new java.util.concurrent.atomic.AtomicInteger();
            output.onWriteFailure(stops::incrementAndGet);
            output.writeInitial(running);
            fs.fill();

            output.resultsUpdated(running);
            assertThat(stops.get()).isOne();
            assertThat(output.writeFailure()).isEqualTo("cannot write results to " + file
                + ": No space left on device");
            assertThat(err.toString().strip().lines()).containsExactly("lossprobe: " + output.writeFailure());
            assertThat(ResultFiles.read(file).status()).hasToString("failed");
            assertThat(ResultFiles.read(file).error()).isNull(); // no room for it: the status alone, in place

            fs.drain();
            output.resultsUpdated(complete);
            RunResult last = ResultFiles.read(file);
            assertThat(last.status()).hasToString("failed");
            assertThat(last.error()).isEqualTo(output.writeFailure());
            assertThat(last.finishedAt()).isEqualTo(complete.finishedAt());
            assertThat(output.resultsWritten()).isTrue();
            assertThat(stops.get()).isOne();
        }
    }

    @Test
    @Tag("system")
    @Timeout(60)
    void standardOutputAsTheResultsGetsTheFinalResultOnceAfterTheTable(@TempDir Path dir) throws Exception {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(javaBin, "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp",
            System.getProperty("java.class.path"), Main.class.getName(), "run", "--transport", "udp", "--ports", "2",
            "--base-port", "46930", "--levels", "1k,1k", "--duration", "200ms", "--warmup", "0", "--drain", "100ms",
            "--quiet", "-o", "/dev/stdout").redirectError(dir.resolve("err.txt").toFile()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(50, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(Files.readString(dir.resolve("err.txt"))).isZero();
        int json = out.indexOf("{");
        assertThat(json).as(out).isPositive();
        assertThat(out.substring(0, json)).contains("proto", "udp ");
        String document = out.substring(json, out.lastIndexOf('}') + 1);
        RunResult r = ResultFiles.mapper().readValue(document, RunResult.class);
        assertThat(r.status()).hasToString("complete");
        assertThat(r.steps()).hasSize(2);
        assertThat(out.split("\"schemaVersion\"", -1)).as("written once").hasSize(2);
    }
}
