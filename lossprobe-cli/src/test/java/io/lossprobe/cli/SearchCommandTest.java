package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.SearchResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.testing.IntervalAssertions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code run --search}, {@code --sizes}, {@code --interval}, {@code --stream} and {@code -o -} as users type them. */
class SearchCommandTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "--search foo|--search takes ndr and pdr, not 'foo'",
        "--search ndr,ndr|--search names a criterion twice",
        "--sizes 0|--sizes 0 is below the 48-byte header",
        "--sizes 64,70000|--sizes 70000 is above the largest UDP payload",
        "--sizes 64,64|--sizes names a size twice",
        "--size 64 --sizes 64,1400|give --size or --sizes, not both",
        "--interval 0|--interval must be greater than 0",
        "--interval 5ms|--interval must be at least 10ms",
        "--interval 10s|--interval must not be longer than --duration",
        "--interval 10ms --duration 24h|--interval cuts each window into more than",
        "--interval 10ms --duration 10m|delay histograms",
        "--search pdr --pdr-loss 0|--pdr-loss must be above 0 % and below 100 %",
        "--search pdr --pdr-loss abc|--pdr-loss is not a percentage like 0.5%: 'abc'",
        "--search ndr --search-precision 0%|--search-precision must be above 0 %",
        "--search ndr --search-trials 1|--search-trials must be between 2 and 1000",
        "--search ndr --search-trial 10s|--search-trial must not be longer than --duration",
        "--search ndr --search-min 1|--search-min 1 is below one message per second per port",
        "--search ndr --search-max 10|--search-max 10 is below --search-min 4800",
        "--latency-at 50%|--latency-at goes with --search",
        "--search ndr --latency-at 150%|--latency-at takes fractions of the PDR",
        "--search ndr --mode echo|--search goes with --mode stream",
        "-o - --stream -|both want stdout",
        "--stream /nonexistent-dir/x.jsonl|cannot write --stream",
        "--target 127.0.0.1:1 --reverse --search ndr|--reverse does not go with --search",
    })
    void badInputExitsTwoWithOneReadableLine(String args, String expected) {
        RunCommandTest.Outcome o = RunCommandTest.execute(("run " + args).split(" "));
        assertThat(o.exit()).as(o.err()).isEqualTo(2);
        assertThat(o.err().strip()).contains(expected).doesNotContain("Exception").doesNotContain("\tat ");
        assertThat(o.err().strip().lines().count()).as(o.err()).isEqualTo(1);
    }

    /**
     * The issue's own command, shortened: NDR and PDR printed with their bounds and written to the results, one
     * object per criterion, each with the trials it took.
     */
    @Test
    @Tag("system")
    @Timeout(120)
    void aSearchPrintsAndWritesNdrAndPdrWithBounds(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("r.json");
        RunCommandTest.Outcome o = RunCommandTest.execute("run", "--transport", "udp", "--ports", "8", "--base-port",
            "39600", "--search", "ndr,pdr", "--duration", "300ms", "--warmup", "100ms", "--drain", "200ms",
            "--search-trial", "100ms", "--search-max", "60k", "--latency-at", "50%", "--quiet", "-o", file.toString());
        assertThat(o.exit()).as(o.err()).isZero();
        assertThat(o.out()).containsPattern("udp +64B NDR [0-9,]+/s \\[[0-9,]+ \\.\\. [-0-9,]+\\]")
            .containsPattern("udp +64B PDR \\(loss <= 0.5%\\) [0-9,]+/s \\[")
            .contains(" trial  1 ");
        RunResult r = ResultFiles.read(file);
        assertThat(r.steps()).as("a search alone keeps only its latency step").hasSize(1);
        SearchResult.LatencyStep half = r.search().get(1).latencySteps().get(0);
        assertThat(half.fraction()).isEqualTo(0.5);
        assertThat(half.rate()).isEqualTo(Math.max(800, Math.round(0.5 * r.search().get(1).rate())));
        assertThat(r.steps().get(0).step()).isEqualTo(half.step());
        assertThat(r.steps().get(0).targetRate()).isEqualTo(half.rate());
        assertThat(r.plan().levels()).isEmpty();
        assertThat(r.search()).extracting(SearchResult::criterion).containsExactly("ndr", "pdr");
        for (SearchResult s : r.search()) {
            assertThat(s.transport()).isEqualTo("udp");
            assertThat(s.messageSize()).isEqualTo(64);
            assertThat(s.trials()).isNotEmpty().hasSizeLessThanOrEqualTo(40);
            assertThat(s.boundedBy().json()).isIn("path", "sender", "max");
            assertThat(s.rate()).isNotNull().isEqualTo(s.lowerBound()).isLessThanOrEqualTo(60_000);
            assertThat(s.lossRatio()).isLessThanOrEqualTo(s.maxLossRatio());
            if (!"max".equals(s.boundedBy().json())) {
                assertThat(s.upperBound()).isGreaterThan(s.lowerBound());
            }
            assertThat(s.trials()).filteredOn(t -> t.rate() == s.rate() && t.phase().equals("full"))
                .anyMatch(t -> t.verdict().equals("pass"));
        }
        JsonNode json = ResultFiles.mapper().readTree(file.toFile());
        JsonNode ndr = json.get("search").get(0);
        for (String field : List.of("criterion", "lossRatio", "rate", "lowerBound", "trials")) {
            assertThat(ndr.has(field)).as(field).isTrue();
        }
    }

    /** -o - writes the results JSON alone on stdout; the table and the progress go to stderr. */
    @Test
    @Tag("system")
    @Timeout(60)
    void resultsToStdoutAndPeopleToStderr() throws Exception {
        RunCommandTest.Outcome o = RunCommandTest.execute("run", "--transport", "udp", "--ports", "2", "--base-port",
            "39620", "--levels", "1k", "--duration", "200ms", "--warmup", "0", "--drain", "100ms", "-o", "-");
        assertThat(o.exit()).as(o.err()).isZero();
        RunResult r = ResultFiles.mapper().readValue(o.out(), RunResult.class);
        assertThat(r.status()).hasToString("complete");
        assertThat(r.steps()).hasSize(1);
        assertThat(o.err()).contains("proto").contains("results written to stdout");
        assertThat(Files.exists(Path.of("-"))).isFalse();
    }

    /**
     * Two sizes cut into 100 ms intervals, streamed as JSON lines: each interval line adds up to its step's line,
     * and the results carry the same intervals.
     */
    @Test
    @Tag("system")
    @Timeout(60)
    void sizesAndIntervalsStreamedAsJsonLines(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("r.json");
        Path lines = dir.resolve("r.jsonl");
        RunCommandTest.Outcome o = RunCommandTest.execute("run", "--transport", "udp", "--ports", "4", "--base-port",
            "39640", "--levels", "4k", "--sizes", "64,1400", "--interval", "100ms", "--duration", "300ms", "--warmup",
            "100ms", "--drain", "200ms", "--quiet", "-o", file.toString(), "--stream", lines.toString(), "--hlog");
        assertThat(o.exit()).as(o.err()).isZero();
        RunResult r = ResultFiles.read(file);
        assertThat(r.plan().sizes()).containsExactly(64, 1400);
        assertThat(r.steps()).extracting(StepResult::messageSize).containsExactly(64, 1400);
        for (StepResult s : r.steps()) {
            IntervalAssertions.assertIntervalsAddUp(s);
        }
        List<JsonNode> parsed = Files.readAllLines(lines).stream().map(l -> {
            try {
                return ResultFiles.mapper().readTree(l);
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        }).toList();
        assertThat(parsed).extracting(n -> n.get("type").asText()).containsExactly("interval", "interval",
            "interval", "step", "interval", "interval", "interval", "step", "end");
        for (int step = 0; step < 2; step++) {
            int s = step;
            long sent = parsed.stream().filter(n -> n.get("type").asText().equals("interval")
                && n.get("step").asInt() == s).mapToLong(n -> n.get("sent").asLong()).sum();
            JsonNode total = parsed.stream().filter(n -> n.get("type").asText().equals("step")
                && n.get("step").asInt() == s).findFirst().orElseThrow();
            assertThat(sent).isEqualTo(total.get("counts").get("sent").asLong()).isEqualTo(1200);
        }
        assertThat(parsed.get(parsed.size() - 1).get("status").asText()).isEqualTo("complete");
        // --hlog: one histogram per interval, the three adding up to the step's delay count.
        org.HdrHistogram.HistogramLogReader log = new org.HdrHistogram.HistogramLogReader(
            dir.resolve("r.udp.step1.delay.hlog").toFile());
        long count = 0;
        int histograms = 0;
        for (org.HdrHistogram.EncodableHistogram h = log.nextIntervalHistogram(); h != null;
             h = log.nextIntervalHistogram()) {
            count += ((org.HdrHistogram.Histogram) h).getTotalCount();
            histograms++;
        }
        log.close();
        assertThat(histograms).isEqualTo(3);
        assertThat(count).isEqualTo(r.steps().get(1).delay().count());
    }

    /**
     * The same between two "hosts" on loopback: a ControlServer in this process, the run with --target. Every trial
     * a step whose rate and window the server checked against the plan; receivers opened per size; intervals
     * counted on the server and added up to each step there.
     */
    @Test
    @Tag("system")
    @Timeout(120)
    void aSearchWithSizesAndIntervalsAgainstAServer(@TempDir Path dir) throws Exception {
        Path secret = dir.resolve("secret");
        io.lossprobe.control.Auth.writeNewSecret(secret);
        io.lossprobe.control.Auth auth = io.lossprobe.control.Auth.load(secret, w -> { });
        try (io.lossprobe.control.ControlServer server = new io.lossprobe.control.ControlServer("127.0.0.1", 0, auth,
            io.lossprobe.control.ServerLimits.DEFAULTS.withPlanLimits(200_000, 64, 60_000_000_000L, 256,
                3_600_000_000_000L, 256L << 20, 1L << 30), io.lossprobe.core.transport.Transports::available, null)) {
            Path file = dir.resolve("r.json");
            RunCommandTest.Outcome o = RunCommandTest.execute("run", "--target", "127.0.0.1:" + server.port(),
                "--secret-file", secret.toString(), "--transport", "udp", "--ports", "4", "--base-port", "39660",
                "--search", "ndr,pdr", "--sizes", "64,512", "--levels", "2k", "--interval", "100ms", "--duration",
                "300ms", "--warmup", "100ms", "--drain", "200ms", "--search-trial", "100ms", "--search-trials", "12",
                "--quiet", "-o", file.toString());
            assertThat(o.exit()).as(o.out() + o.err()).isZero();
            RunResult r = ResultFiles.read(file);
            assertThat(r.plan().search().maxRate()).as("the server's --max-rate").isEqualTo(200_000);
            assertThat(r.steps()).extracting(StepResult::messageSize).containsExactly(64, 512);
            for (StepResult s : r.steps()) {
                IntervalAssertions.assertIntervalsAddUp(s);
                assertThat(s.delay().basis()).isEqualTo(io.lossprobe.core.result.Latency.CLOCK_OFFSET);
            }
            assertThat(r.search()).extracting(SearchResult::messageSize).containsExactly(64, 64, 512, 512);
            for (SearchResult s : r.search()) {
                assertThat(s.trials()).isNotEmpty().allMatch(t -> t.rate() <= 200_000 && t.rate() > 0);
                assertThat(s.lowerBound()).isNotNull();
            }
        }
    }
}
