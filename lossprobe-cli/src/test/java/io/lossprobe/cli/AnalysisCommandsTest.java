package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.result.ResultFiles;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code lossprobe check}, {@code compare} and {@code report} end to end through the command line, on a real
 * UDP result (src/test/resources/sample-result.json: 8 ports, levels 10k and 50k, no loss) edited as JSON.
 */
class AnalysisCommandsTest {
    private static final String POLICY = """
        {"defaults": {"maxLossPercent": 0.1, "minAchievedPercentOfTarget": 99, "maxP99DelayMs": 1000,
                      "maxRetransmitsPer1k": 1, "maxNaksPer1k": 1}}
        """;

    @TempDir
    Path dir;

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

    private static ObjectNode sample() throws IOException {
        try (InputStream in = AnalysisCommandsTest.class.getResourceAsStream("/sample-result.json")) {
            return (ObjectNode) ResultFiles.mapper().readTree(in);
        }
    }

    private Path result(String name, int step, Consumer<ObjectNode> edit) throws IOException {
        ObjectNode root = sample();
        if (edit != null) {
            edit.accept((ObjectNode) root.withArray("steps").get(step));
        }
        Path file = dir.resolve(name);
        Files.write(file, ResultFiles.mapper().writeValueAsBytes(root));
        return file;
    }

    private Path policy(String json) throws IOException {
        return Files.writeString(dir.resolve("policy-" + System.nanoTime() + ".json"), json);
    }

    private static void lose(ObjectNode step, long lost) {
        ObjectNode counts = (ObjectNode) step.get("counts");
        counts.put("lost", lost).put("received", counts.get("sent").asLong() - lost);
    }

    private static void assertOneLine(Outcome o) {
        assertThat(o.err().strip()).startsWith("lossprobe: ").doesNotContain("\n").doesNotContain("Exception")
            .doesNotContain("\tat ");
    }

    @Test
    void cleanResultPassesWithExit0AndWritesTextfileAndJunit() throws IOException {
        Path prom = dir.resolve("lossprobe.prom");
        Path junit = dir.resolve("junit.xml");
        Outcome o = execute("check", "--policy", policy(POLICY).toString(), result("ok.json", 0, null).toString(),
            "--prometheus", prom.toString(), "--junit", junit.toString());
        assertThat(o.exit()).as(o.out() + o.err()).isZero();
        assertThat(o.out()).contains("check passed");
        assertThat(Files.readString(prom)).containsPattern("lossprobe_last_check_passed\\{direction=\"forward\","
            + "mode=\"stream\",name=\"plan-[0-9a-f]{8}\",size_bytes=\"64\",target=\"local\"} 1.0");
        // --name labels every series instead of the plan's hash.
        assertThat(execute("check", "--policy", policy(POLICY).toString(), result("ok.json", 0, null).toString(),
            "--prometheus", prom.toString(), "--name", "nightly-udp").exit()).isZero();
        assertThat(Files.readString(prom)).contains("lossprobe_last_check_passed{direction=\"forward\","
            + "mode=\"stream\",name=\"nightly-udp\",size_bytes=\"64\",target=\"local\"} 1.0")
            .doesNotContain("name=\"plan-");
        assertThat(execute("check", "--policy", policy(POLICY).toString(), result("ok.json", 0, null).toString(),
            "--prometheus", prom.toString(), "--name", " ").err()).contains("--name must not be blank");
        // The textfile's target label can be named where the result cannot (a --reverse run's server).
        assertThat(execute("check", "--policy", policy(POLICY).toString(), result("ok.json", 0, null).toString(),
            "--prometheus", prom.toString(), "--target-label", "server-b.example").exit()).isZero();
        assertThat(Files.readString(prom)).contains("target=\"server-b.example\"").doesNotContain("target=\"local\"");
        assertThat(Files.readString(junit)).contains("<testsuite name=\"lossprobe check\"").contains("failures=\"0\"");
    }

    /**
     * A real multicast run (src/test/resources/sample-multicast.json: three receivers, 198.18.0.102 lost 0.89 %):
     * check judges the worst receiver and names it, its textfile has each receiver's series, the Markdown report its
     * receiver-by-flow matrix.
     */
    @Test
    void aMulticastRunIsCheckedOnItsWorstReceiverWithEachReceiverInTheTextfileAndTheReport() throws Exception {
        Path sample = Path.of(getClass().getResource("/sample-multicast.json").toURI());
        Path prom = dir.resolve("m.prom");
        Outcome o = execute("check", "--policy", policy("{\"defaults\":{\"maxLossPercent\":0.5}}").toString(),
            sample.toString(), "--prometheus", prom.toString());
        assertThat(o.exit()).as(o.out() + o.err()).isEqualTo(1);
        assertThat(o.out()).contains("FAIL udp 20k maxLossPercent: 0.8900% > limit 0.5000% (multicast: worst "
            + "receiver 198.18.0.102 of 3)");
        assertThat(Files.readString(prom)).contains("lossprobe_last_check_passed{").containsPattern(
            "lossprobe_last_run_receiver_lost_messages\\{[^}]*receiver=\"198.18.0.102\"[^}]*} 178.0")
            .containsPattern("lossprobe_last_run_receiver_lost_messages\\{[^}]*receiver=\"198.18.0.103\"[^}]*} 0.0");
        Outcome md = execute("report", "--format", "md", sample.toString());
        assertThat(md.exit()).isZero();
        assertThat(md.out()).contains("| 198.18.0.102 (worst) | 40 / 0.800% | 65 / 1.300% | 37 / 0.740% "
            + "| 36 / 0.720% | 178 / 0.890% |");
    }

    @Test
    void eachBrokenThresholdExits1AndNamesTransportLevelMetric() throws IOException {
        String p = policy(POLICY).toString();
        record Case(String metric, int step, Consumer<ObjectNode> edit) {
        }
        for (Case c : new Case[] {
            new Case("udp 50k maxLossPercent", 1, s -> lose(s, 600)),
            new Case("udp 10k minAchievedPercentOfTarget", 0, s -> s.put("achievedReceiveRate", 9000.0)),
            new Case("udp 50k maxP99DelayMs", 1, s -> s.with("delay").put("p99Ns", 3_000_000_000L)),
            new Case("udp 10k maxRetransmitsPer1k", 0, s -> s.with("transportCounters").put("retransmitsSent", 50)),
            new Case("udp 10k maxNaksPer1k", 0, s -> s.with("transportCounters").put("naksSent", 50))}) {
            Outcome o = execute("check", "--policy", p, result("bad.json", c.step(), c.edit()).toString());
            assertThat(o.exit()).as(c.metric() + ": " + o.out() + o.err()).isEqualTo(1);
            assertThat(o.out()).contains("FAIL " + c.metric()).contains("check FAILED: 1 of");
        }
    }

    @Test
    void regressionAgainstBaselineExits1() throws IOException {
        Path base = result("base.json", 0, null);
        Path worse = result("worse.json", 1, s -> s.put("achievedReceiveRate", 30000.0));
        Outcome o = execute("check", "--policy", policy("{}").toString(), "--baseline", base.toString(),
            worse.toString());
        assertThat(o.exit()).isEqualTo(1);
        assertThat(o.out()).contains("FAIL udp 50k baseline.achievedRate");
        // The policy's own baseline file, relative to the policy.
        Path pol = Files.writeString(dir.resolve("with-baseline.json"), "{\"baseline\":{\"file\":\"base.json\"}}");
        assertThat(execute("check", "--policy", pol.toString(), worse.toString()).exit()).isEqualTo(1);
        assertThat(execute("check", "--policy", pol.toString(), base.toString()).exit()).isZero();
    }

    @Test
    void malformedJsonNewerSchemaUnknownKeyAndMissingFileExit2WithOneLine() throws IOException {
        String p = policy(POLICY).toString();
        Path malformed = Files.writeString(dir.resolve("malformed.json"), "{\"schemaVersion\": 1, \"steps\": [");
        Outcome o = execute("check", "--policy", p, malformed.toString());
        assertThat(o.exit()).isEqualTo(2);
        assertThat(o.err()).contains("not valid JSON");
        assertOneLine(o);

        ObjectNode newer = sample();
        newer.put("schemaVersion", 99);
        Path newerFile = dir.resolve("newer.json");
        Files.write(newerFile, ResultFiles.mapper().writeValueAsBytes(newer));
        o = execute("check", "--policy", p, newerFile.toString());
        assertThat(o.exit()).isEqualTo(2);
        assertThat(o.err()).contains("schema version 99");
        assertOneLine(o);

        o = execute("check", "--policy", policy("{\"defaults\":{\"maxLoss\":1}}").toString(),
            result("ok.json", 0, null).toString());
        assertThat(o.exit()).isEqualTo(2);
        assertThat(o.err()).contains("unknown key 'maxLoss'");
        assertOneLine(o);

        o = execute("check", "--policy", p, dir.resolve("missing.json").toString());
        assertThat(o.exit()).isEqualTo(2);
        assertOneLine(o);

        o = execute("check", result("ok.json", 0, null).toString());
        assertThat(o.exit()).as("--policy is required").isEqualTo(2);
    }

    @Test
    void compareShowsDeltasAndFlagsRegressions() throws IOException {
        Path a = result("a.json", 0, null);
        Path b = result("b.json", 1, s -> lose(s, 2000));
        Outcome o = execute("compare", a.toString(), b.toString());
        assertThat(o.exit()).isZero();
        assertThat(o.out()).contains("REGRESSION").contains("udp 50k: loss % up")
            .contains("verdict: 1 of 2 step(s) regressed: udp 50k");
        assertThat(execute("compare", "--fail-on-regression", a.toString(), b.toString()).exit()).isEqualTo(1);
        assertThat(execute("compare", "--fail-on-regression", a.toString(), a.toString()).exit()).isZero();
    }

    @Test
    void compareWritesEveryFormatAndWarnsWhenThePlansDiffer() throws IOException {
        Path a = result("a.json", 0, null);
        ObjectNode other = sample();
        ((ObjectNode) other.get("plan")).put("ports", 48).put("durationNs", 3_000_000_000L).put("messageSize", 1024)
            .put("pattern", "burst:64");
        lose((ObjectNode) other.withArray("steps").get(1), 2000);
        Path b = dir.resolve("b.json");
        Files.write(b, ResultFiles.mapper().writeValueAsBytes(other));

        Outcome text = execute("compare", a.toString(), b.toString());
        assertThat(text.exit()).isZero();
        assertThat(text.out()).contains("!! WARNING: the plans differ", "ports: 8 (A) vs 48 (B)",
            "window: 1000 ms (A) vs 3000 ms (B)", "message size (bytes): 64 (A) vs 1024 (B)",
            "send pattern: constant (A) vs burst:64 (B)", "REGRESSION",
            "verdict: 1 of 2 step(s) regressed: udp 50k (plans differ");
        assertThat(text.out().lines()).allSatisfy(l -> assertThat(l.length()).as(l).isLessThanOrEqualTo(100));

        Path html = dir.resolve("c.html");
        Outcome o = execute("compare", a.toString(), b.toString(), "--format", "html", "-o", html.toString());
        assertThat(o.exit()).as(o.err()).isZero();
        assertThat(o.err()).contains("warning: the plans differ");
        String page = Files.readString(html);
        assertThat(page).contains("id=\"plan-warning\"", "ports: 8 (A) vs 48 (B)", "id=\"compare-loss\"",
            ">A udp</text>", ">B udp</text>", "id=\"compare-delay-0-udp\"", ">A udp p50</text>", ">B udp p99</text>");

        Outcome json = execute("compare", a.toString(), b.toString(), "--format", "json");
        var tree = ResultFiles.mapper().readTree(json.out());
        assertThat(tree.get("plansDiffer").asBoolean()).isTrue();
        assertThat(tree.get("regressed").asInt()).isEqualTo(1);
        assertThat(tree.get("rows").get(1).get("regressions").get(0).get("metric").asText()).isEqualTo("lossPercent");
        assertThat(execute("compare", a.toString(), b.toString(), "--format", "md").out())
            .contains("> **Warning: the plans differ**", "| udp | 50k |");

        assertThat(execute("compare", a.toString(), a.toString()).out()).doesNotContain("WARNING")
            .contains("verdict: no regressions in 2 step(s)");
        Outcome bad = execute("compare", a.toString(), b.toString(), "--format", "pdf");
        assertThat(bad.exit()).isEqualTo(2);
        assertOneLine(bad);
        Outcome over = execute("compare", a.toString(), b.toString(), "-o", b.toString());
        assertThat(over.exit()).isEqualTo(2);
        assertOneLine(over);
    }

    @Test
    void reportRefusesToWriteOverItsInput() throws IOException {
        Path r = result("in.json", 0, null);
        byte[] before = Files.readAllBytes(r);
        Outcome o = execute("report", r.toString(), "-o", r.toString());
        assertThat(o.exit()).isEqualTo(2);
        assertThat(o.err()).contains("refusing to write").contains("over the input");
        assertOneLine(o);
        assertThat(Files.readAllBytes(r)).isEqualTo(before);
        // The same file by another name, and through a symbolic link.
        Path link = Files.createSymbolicLink(dir.resolve("link.json"), r);
        assertThat(execute("report", r.toString(), "-o", dir.resolve("./in.json").toString()).exit()).isEqualTo(2);
        assertThat(execute("report", r.toString(), "-o", link.toString()).exit()).isEqualTo(2);
        assertThat(Files.readAllBytes(r)).isEqualTo(before);
    }

    /** check's baseline, report's policy and mesh merge's sources are inputs too. */
    @Test
    void everyAnalysisCommandRefusesToWriteOverAnyOfItsInputs() throws IOException {
        Path r = result("in.json", 0, null);
        Path base = result("base.json", 0, null);
        Path p = policy(POLICY);
        Path meshFile = Files.writeString(dir.resolve("mesh.json"), "{}");
        byte[][] before = {Files.readAllBytes(r), Files.readAllBytes(base), Files.readAllBytes(p),
            Files.readAllBytes(meshFile)};
        String[][] cases = {
            {"check", "--policy", p.toString(), "--baseline", base.toString(), "--prometheus", base.toString(),
                r.toString()},
            {"report", r.toString(), "--policy", p.toString(), "-o", p.toString()},
            {"mesh", "merge", meshFile.toString(), "-o", meshFile.toString()},
        };
        for (String[] args : cases) {
            Outcome o = execute(args);
            assertThat(o.exit()).as(String.join(" ", args) + ": " + o.err()).isEqualTo(2);
            assertThat(o.err()).as(String.join(" ", args)).contains("refusing to write").contains("over the input");
            assertOneLine(o);
        }
        assertThat(Files.readAllBytes(r)).isEqualTo(before[0]);
        assertThat(Files.readAllBytes(base)).isEqualTo(before[1]);
        assertThat(Files.readAllBytes(p)).isEqualTo(before[2]);
        assertThat(Files.readAllBytes(meshFile)).isEqualTo(before[3]);
    }

    @Test
    void checkRefusesToWriteItsFilesOverItsInputs() throws IOException {
        Path r = result("in.json", 0, null);
        Path p = policy(POLICY);
        byte[] result = Files.readAllBytes(r);
        byte[] policy = Files.readAllBytes(p);
        for (String[] args : new String[][] {{"--junit", r.toString()}, {"--prometheus", r.toString()},
            {"--junit", p.toString()}, {"--prometheus", p.toString()}}) {
            Outcome o = execute("check", "--policy", p.toString(), args[0], args[1], r.toString());
            assertThat(o.exit()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(o.err()).contains("refusing to write").contains("over the input");
            assertOneLine(o);
        }
        assertThat(Files.readAllBytes(r)).isEqualTo(result);
        assertThat(Files.readAllBytes(p)).isEqualTo(policy);
    }

    @Test
    void reportWithAPolicyLeadsWithTheCheck() throws IOException {
        Path r = result("r.json", 1, s -> lose(s, 600));
        Path html = dir.resolve("report.html");
        Outcome o = execute("report", r.toString(), "--policy", policy(POLICY).toString(), "-o", html.toString());
        assertThat(o.exit()).as(o.err()).isZero();
        String page = Files.readString(html);
        assertThat(page.indexOf("Check FAILED")).isPositive().isLessThan(page.indexOf("id=\"chart-loss\""));
        Outcome bad = execute("report", r.toString(), "--policy", policy("{\"nope\":1}").toString(), "-o",
            html.toString());
        assertThat(bad.exit()).isEqualTo(2);
        assertOneLine(bad);
    }

    @Test
    void reportWritesHtmlMarkdownAndCsv() throws IOException {
        Path r = result("r.json", 0, null);
        Path html = dir.resolve("report.html");
        Outcome o = execute("report", r.toString(), "-o", html.toString());
        assertThat(o.exit()).as(o.err()).isZero();
        assertThat(Files.readString(html)).contains("<svg").contains("id=\"heatmap-udp\"");
        Outcome md = execute("report", "--format", "md", r.toString());
        assertThat(md.out()).startsWith("| started | transport | level | received/s");
        Outcome csv = execute("report", "--format", "csv", r.toString());
        assertThat(csv.out().lines().count()).isEqualTo(3);
        assertThat(execute("report", "--format", "pdf", r.toString()).exit()).isEqualTo(2);
        assertThat(execute("report", "-o", dir.resolve("no/such/dir/r.html").toString(), r.toString()).exit())
            .isEqualTo(2);
    }
}
