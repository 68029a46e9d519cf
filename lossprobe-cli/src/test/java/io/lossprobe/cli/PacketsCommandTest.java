package io.lossprobe.cli;

import static io.lossprobe.cli.RunCommandTest.execute;
import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.testing.GoodnessOfFit;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --packets}: the CSV read back as pandas or DuckDB would, its rows adding up to the results file's counts,
 * a Poisson step's intended gaps exponential at the planned rate (Kolmogorov-Smirnov, fixed seed) where a constant
 * step's are not, sampling and gzip, a reverse run's rows, and bad usage. Ports 44700-44709.
 */
@Tag("system")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PacketsCommandTest {
    @TempDir
    Path dir;

    record Row(String transport, int step, int flow, long seq, String status, Long intendedNs, Long sentNs,
               Long receivedNs, boolean reordered, int duplicates, int lateDuplicates) {
    }

    static List<Row> read(Path file) throws IOException {
        InputStream in = Files.newInputStream(file);
        if (file.toString().endsWith(".gz")) {
            in = new GZIPInputStream(in);
        }
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            assertThat(r.readLine()).isEqualTo(PacketsFile.HEADER);
            List<String> columns = Arrays.asList(PacketsFile.HEADER.split(","));
            List<Row> rows = new ArrayList<>();
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                String[] f = line.split(",", -1);
                assertThat(f).hasSize(columns.size());
                rows.add(new Row(f[0], Integer.parseInt(f[2]), Integer.parseInt(f[4]), Long.parseLong(f[5]), f[6],
                    time(f[7]), time(f[8]), time(f[9]), f[11].equals("1"), Integer.parseInt(f[12]),
                    Integer.parseInt(f[13])));
            }
            return rows;
        }
    }

    private static Long time(String s) {
        return s.isEmpty() ? null : Long.parseLong(s);
    }

    private RunResult run(String name, String... extra) throws IOException {
        Path out = dir.resolve(name + ".json");
        List<String> args = new ArrayList<>(List.of("run", "--transport", "udp", "--warmup", "0", "--drain",
            "300ms", "--quiet", "-o", out.toString()));
        args.addAll(List.of(extra));
        RunCommandTest.Outcome o = execute(args.toArray(String[]::new));
        assertThat(o.exit()).as(o.out() + o.err()).isZero();
        return ResultFiles.read(out);
    }

    /** Every flow's rows against its counts in the results file. */
    private static void assertRowsAddUp(RunResult result, List<Row> rows) {
        Map<String, List<Row>> byFlow = new HashMap<>();
        for (Row r : rows) {
            byFlow.computeIfAbsent(r.transport() + "/" + r.step() + "/" + r.flow(), k -> new ArrayList<>()).add(r);
        }
        for (StepResult step : result.steps()) {
            for (FlowResult f : step.flows()) {
                Counts c = f.counts();
                List<Row> mine = byFlow.getOrDefault(step.transport() + "/" + step.step() + "/" + f.flow(),
                    List.of());
                String what = step.transport() + " step " + step.step() + " flow " + f.flow();
                assertThat(mine.stream().filter(r -> !r.status().equals("failed")).count()).as("rows, " + what)
                    .isEqualTo(c.sent());
                assertThat(mine.stream().filter(r -> r.status().equals("received")).count()).as(what)
                    .isEqualTo(c.received());
                assertThat(mine.stream().filter(r -> r.status().equals("lost") || r.status().equals("late"))
                    .count()).as(what).isEqualTo(c.lost());
                assertThat(mine.stream().filter(Row::reordered).count()).as(what).isEqualTo(c.reordered());
                assertThat(mine.stream().mapToLong(Row::duplicates).sum()).as(what).isEqualTo(c.duplicates());
                for (int i = 0; i < mine.size(); i++) {
                    assertThat(mine.get(i).seq()).as("wire order, " + what).isEqualTo(i);
                }
            }
        }
    }

    private static double[] gaps(List<Row> rows, java.util.function.Function<Row, Long> time) {
        double[] out = new double[rows.size() - 1];
        for (int i = 1; i < rows.size(); i++) {
            out[i - 1] = time.apply(rows.get(i)) - time.apply(rows.get(i - 1));
        }
        return out;
    }

    @Test
    void aPoissonStepsGapsAreExponentialAtThePlannedRateAndAConstantStepsAreNot() throws IOException {
        Path poissonFile = dir.resolve("poisson.csv");
        RunResult poisson = run("poisson", "--ports", "1", "--base-port", "44700", "--levels", "2k", "--duration",
            "1s", "--pattern", "poisson", "--seed", "42", "--packets", poissonFile.toString());
        List<Row> rows = read(poissonFile);
        assertRowsAddUp(poisson, rows);
        assertThat(rows).allMatch(r -> r.intendedNs() != null && r.sentNs() != null);
        double[] intended = gaps(rows, Row::intendedNs);
        double rate = 2000 / 1e9;
        double critical = GoodnessOfFit.ksCritical(intended.length);
        double d = GoodnessOfFit.ksExponential(intended, rate);
        assertThat(d).as("KS distance of %d intended gaps from Exp(2000/s), critical %.4f", intended.length,
            critical).isLessThan(critical);
        // The actual send times, for the record (the sender's wake-ups bend the smallest gaps).
        System.out.printf("poisson 2k/s seed 42: KS intended %.4f, actual %.4f, critical %.4f (n=%d)%n", d,
            GoodnessOfFit.ksExponential(gaps(rows, Row::sentNs), rate), critical, intended.length);

        Path constantFile = dir.resolve("constant.csv");
        RunResult constant = run("constant", "--ports", "1", "--base-port", "44702", "--levels", "2k",
            "--duration", "1s", "--packets", constantFile.toString());
        List<Row> even = read(constantFile);
        assertRowsAddUp(constant, even);
        assertThat(GoodnessOfFit.ksExponential(gaps(even, Row::intendedNs), rate)).as("a constant step's gaps")
            .isGreaterThan(critical);
    }

    @Test
    void aGzippedSampleAddsUpPerRowAndTheLimitIsSaid() throws IOException {
        Path file = dir.resolve("sample.csv.gz");
        Path out = dir.resolve("sample.json");
        RunCommandTest.Outcome o = execute("run", "--transport", "udp,tcp", "--ports", "2", "--base-port", "44704",
            "--levels", "4k", "--duration", "500ms", "--warmup", "0", "--drain", "300ms", "--packets",
            file.toString(), "--packets-every", "10", "--packets-limit", "150", "-o", out.toString());
        assertThat(o.exit()).as(o.out() + o.err()).isZero();
        RunResult result = ResultFiles.read(out);
        List<Row> rows = read(file);
        // 1,000 per flow (fewer if the sender fell behind), every 10th: up to 100 recordable, the first 75 kept
        // (150 rows shared by 2 flows), the rest over the limit.
        long over = 0;
        for (StepResult step : result.steps()) {
            for (FlowResult f : step.flows()) {
                List<Row> mine = rows.stream().filter(r -> r.transport().equals(step.transport())
                    && r.flow() == f.flow()).toList();
                assertThat(mine).extracting(Row::seq).containsExactlyElementsOf(
                    java.util.stream.LongStream.range(0, 75).map(i -> i * 10).boxed().toList());
                long lostRows = mine.stream().filter(r -> !r.status().equals("received")).count();
                assertThat(lostRows).as("a sampled row is lost only if the flow lost something")
                    .isLessThanOrEqualTo(f.counts().lost());
                long wireEnd = f.counts().sent() + f.counts().sendFailed(); // loopback refuses nothing at 4k/s
                over += Math.max(0, (wireEnd + 9) / 10 - 75);
            }
        }
        assertThat(o.out()).contains("300 packet row(s) written to " + file
            + "; " + over + " message(s) over --packets-limit not written");
    }

    /**
     * {@code --reverse}: a serve sends, this host records; the rows add up as in the embedded run, and what arrived
     * carries the sender's times (those that never arrived have none: only the server knew them).
     */
    @Test
    void aReverseRunsRowsAddUpToo() throws Exception {
        String secret = "a packets test secret of 32 bytes or more";
        Path secretFile = Files.writeString(dir.resolve("secret"), secret + "\n");
        try (io.lossprobe.control.ControlServer server = new io.lossprobe.control.ControlServer("127.0.0.1", 0,
            io.lossprobe.control.Auth.ofSecret(secret), io.lossprobe.control.ServerLimits.DEFAULTS,
            io.lossprobe.core.transport.Transports::available, new java.io.PrintWriter(new java.io.StringWriter()))) {
            Path file = dir.resolve("reverse.csv");
            RunResult result = run("reverse", "--target", "127.0.0.1:" + server.port(), "--secret-file",
                secretFile.toString(), "--reverse", "--transport", "udp,tcp", "--ports", "2", "--base-port",
                "44708", "--levels", "4k", "--duration", "500ms", "--packets", file.toString());
            List<Row> rows = read(file);
            assertRowsAddUp(result, rows);
            assertThat(rows).isNotEmpty().allMatch(r -> !r.status().equals("received")
                || r.intendedNs() != null && r.sentNs() != null && r.receivedNs() != null);
        }
    }

    @Test
    void badUsageIsOneLineAndExitTwo() {
        Path file = dir.resolve("p.csv");
        Path json = dir.resolve("r.json");
        for (List<String> args : List.of(
            List.of("--target", "127.0.0.1:9", "--secret-file", "/nonexistent"),
            List.of("--packets-limit", "0"),
            List.of("--packets-every", "0"),
            List.of("--packets-limit", "100G"))) {
            List<String> all = new ArrayList<>(List.of("run", "--ports", "1", "--base-port", "44706", "--packets",
                file.toString(), "-o", json.toString()));
            all.addAll(args);
            RunCommandTest.Outcome o = execute(all.toArray(String[]::new));
            assertThat(o.exit()).as(String.join(" ", args) + ": " + o.err()).isEqualTo(2);
            assertThat(o.err().strip().lines()).as(o.err()).hasSize(1);
        }
        RunCommandTest.Outcome same = execute("run", "--ports", "1", "--packets", json.toString(), "-o",
            json.toString());
        assertThat(same.exit()).isEqualTo(2);
        assertThat(same.err()).contains("--packets " + json + " is another output of the run");
        assertThat(execute("run", "--target", "127.0.0.1:9", "--packets", file.toString()).err())
            .contains("--packets needs this host's receivers");
        assertThat(Files.exists(file)).as("nothing written before traffic").isFalse();
    }
}
