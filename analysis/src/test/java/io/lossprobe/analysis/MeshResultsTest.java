package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mesh files: one source's share, the merge, the matrix, the policy per pair and the Prometheus labels, over a
 * three-host mesh made of the real loopback result in {@link Fixtures} (8 ports, udp 10k and 50k).
 */
class MeshResultsTest {
    private static final List<MeshResult.Host> HOSTS = List.of(new MeshResult.Host("a", "10.0.0.1", 7400),
        new MeshResult.Host("b", "10.0.0.2", 7400), new MeshResult.Host("c", "10.0.0.3", 7400));
    /** The full mesh of a, b, c in the rounds the circle method gives (odd: one host idle per round). */
    private static final List<MeshResult.Planned> PLANNED = List.of(planned("a", "c", 0), planned("b", "a", 1),
        planned("c", "b", 2), planned("c", "a", 3), planned("a", "b", 4), planned("b", "c", 5));

    @TempDir
    Path dir;

    private static MeshResult.Planned planned(String s, String t, int round) {
        return new MeshResult.Planned(s, t, round);
    }

    private static RunResult run(long lostAt50k) throws Exception {
        ObjectNode root = Fixtures.withStep(1, s -> Fixtures.lose(s, lostAt50k));
        return ResultFiles.mapper().treeToValue(root, RunResult.class);
    }

    private static MeshResult.Pair complete(String s, String t, int round, long lost) throws Exception {
        return new MeshResult.Pair(s, t, round, MeshResult.COMPLETE, null, "2026-12-01T03:05:00Z", 3000L, 10L,
            null, null, run(lost));
    }

    private static MeshResult share(List<String> sources, List<MeshResult.Pair> pairs) {
        return new MeshResult(MeshResult.KIND, MeshResult.SCHEMA_VERSION, "lossprobe test", "2026-12-01T03:05:00Z",
            "2026-12-01T03:06:00Z", "full", HOSTS, sources,
            new MeshResult.Schedule(6, 0, 10_000, "2026-12-01T03:05:00Z", PLANNED), pairs);
    }

    /** a's and c's shares (b's mesh never ran); c lost 500 at 50k towards b. */
    private List<Path> shares() throws Exception {
        Path a = dir.resolve("a.json");
        MeshFiles.write(a, share(List.of("a"), List.of(complete("a", "c", 0, 0), complete("a", "b", 4, 0))));
        Path c = dir.resolve("c.json");
        MeshFiles.write(c, share(List.of("c"), List.of(complete("c", "b", 2, 500),
            new MeshResult.Pair("c", "a", 3, MeshResult.FAILED, "cannot reach lossprobe serve at 10.0.0.1:7400: "
                + "Connection refused", "2026-12-01T03:05:30Z", 12L, 0L, null, null, null))));
        return List.of(a, c);
    }

    @Test
    void mergingSharesKeepsTheScheduleOrderAndMarksWhatNoSourceReported() throws Exception {
        MeshResult merged = MeshFiles.readAll(shares());
        assertThat(merged.sources()).containsExactly("a", "c");
        assertThat(merged.pairs()).extracting(p -> p.source() + ">" + p.target() + ":" + p.status())
            .containsExactly("a>c:complete", "b>a:missing", "c>b:complete", "c>a:failed", "a>b:complete",
                "b>c:missing");
        assertThat(merged.pair("b", "a").orElseThrow().error()).contains("no result from b");
        // A merged file merges again to itself.
        Path m = dir.resolve("merged.json");
        MeshFiles.write(m, merged);
        assertThat(MeshFiles.readAll(List.of(m)).pairs()).isEqualTo(merged.pairs());
        assertThat(MeshFiles.isMesh(m)).isTrue();
    }

    @Test
    void filesOfDifferentMeshesOrTheSamePairTwiceAreRefused() throws Exception {
        List<Path> shares = shares();
        assertThatThrownBy(() -> MeshFiles.readAll(List.of(shares.get(0), shares.get(0))))
            .isInstanceOf(InputException.class).hasMessageContaining("both hold a -> c");
        Path other = dir.resolve("other.json");
        MeshResult o = share(List.of("b"), List.of());
        MeshFiles.write(other, new MeshResult(o.kind(), o.meshSchemaVersion(), o.tool(), o.startedAt(),
            o.finishedAt(), o.selection(), HOSTS.subList(0, 2), o.sources(), o.schedule(), o.pairs()));
        assertThatThrownBy(() -> MeshFiles.readAll(List.of(shares.get(0), other)))
            .isInstanceOf(InputException.class).hasMessageContaining("is from another mesh");
    }

    @Test
    void newerVersionsAndOtherFilesAreRefusedInOneLine() throws Exception {
        ObjectNode tree = (ObjectNode) ResultFiles.mapper().readTree(Files.readAllBytes(shares().get(0)));
        tree.put("meshSchemaVersion", 99);
        Path newer = Files.write(dir.resolve("newer.json"), ResultFiles.mapper().writeValueAsBytes(tree));
        assertThatThrownBy(() -> MeshFiles.read(newer)).hasMessageContaining("mesh schema version 99, newer");
        tree.put("meshSchemaVersion", 1);
        ((ObjectNode) tree.withArray("pairs").get(0).get("result")).put("schemaVersion", 99);
        Path newerRun = Files.write(dir.resolve("newer-run.json"), ResultFiles.mapper().writeValueAsBytes(tree));
        assertThatThrownBy(() -> MeshFiles.read(newerRun)).hasMessageContaining("a -> c has schema version 99");
        Path run = Fixtures.write(dir, "run.json", Fixtures.sample());
        assertThat(MeshFiles.isMesh(run)).isFalse();
        assertThatThrownBy(() -> MeshFiles.read(run)).hasMessageContaining("not a lossprobe mesh file");
        tree.put("pairs", "none");
        ((ObjectNode) tree).remove("meshSchemaVersion");
        Path bad = Files.write(dir.resolve("bad.json"), ResultFiles.mapper().writeValueAsBytes(tree));
        assertThatThrownBy(() -> MeshFiles.read(bad)).hasMessageEndingWith("at pairs: expected a list, found a string")
            .hasMessageNotContaining("`");
    }

    @Test
    void theMatrixShowsEachPairAndEachHostsTotals() throws Exception {
        MeshReport report = MeshReport.of(MeshFiles.readAll(shares()));
        String md = report.markdown();
        // udp 50k: c -> b lost 500 of the sample's sent.
        long sent = run(0).steps().get(1).counts().sent();
        String pct = String.format(java.util.Locale.ROOT, "%.3f%%", 100.0 * 500 / sent);
        assertThat(md).contains("## udp 50k", "| c | failed | " + pct + " / ", "| a | · | 0.000% / ");
        // As destinations: a has no measured pair (b -> a missing, c -> a failed); b got 500 lost over two pairs.
        String both = String.format(java.util.Locale.ROOT, "%.3f%%", 100.0 * 500 / (2 * sent));
        assertThat(md.lines().filter(l -> l.startsWith("| as destination |")).toList().get(1))
            .isEqualTo("| as destination |  | " + both + " | 0.000% |  |");
        assertThat(md).contains("- b -> a: missing: no result from b", "- c -> a: failed: cannot reach");
        String html = report.html();
        assertThat(html).contains("<h2>udp 50k</h2>", "class=\"down\"", "class=\"nodata\"", "class=\"high\"")
            .doesNotContain("<script");
        List<String> csv = report.csv().lines().toList();
        assertThat(csv.get(0)).isEqualTo("source,target,round,status,transport,level,sent,lost,lossPercent,p99DelayMs,"
            + "error");
        assertThat(csv).anySatisfy(l -> assertThat(l).startsWith("c,b,2,complete,udp,50k," + sent + ",500,"))
            .anySatisfy(l -> assertThat(l).startsWith("b,a,1,missing,,,,,,,no result from b"));
    }

    @Test
    void thePolicyHoldsPerPairAndAPairThatDidNotRunFails() throws Exception {
        Policy policy = Policy.read(Files.writeString(dir.resolve("p.json"),
                "{\"defaults\":{\"maxLossPercent\":0.1}}"));
        MeshCheck.Outcome outcome = new MeshCheck(policy).check(MeshFiles.readAll(shares()));
        assertThat(outcome.passed()).isFalse();
        assertThat(outcome.failures()).extracting(MeshCheck.PairCheck::label)
            .containsExactly("b -> a", "c -> b", "c -> a", "b -> c");
        assertThat(outcome.pairs().get(0).passed()).isTrue();
        String junit = MeshCheck.junit(outcome);
        assertThat(junit).contains("classname=\"lossprobe.mesh.c.b\" name=\"udp.50k.maxLossPercent\"",
            "failures=\"4\"", "classname=\"lossprobe.mesh.b.a\" name=\"ran\"");
    }

    @Test
    void prometheusSeriesCarrySourceAndTargetAndPassPromtool() throws Exception {
        Policy policy = Policy.read(Files.writeString(dir.resolve("p.json"),
                "{\"defaults\":{\"maxLossPercent\":0.1}}"));
        MeshResult mesh = MeshFiles.readAll(shares());
        Path prom = dir.resolve("mesh.prom");
        MeshPrometheus.write(prom, mesh, Optional.of(new MeshCheck(policy).check(mesh)));
        String text = Files.readString(prom);
        String name = "name=\"" + MeshPrometheus.defaultName(mesh) + "\"";
        assertThat(MeshPrometheus.defaultName(mesh)).matches("mesh-[0-9a-f]{8}");
        assertThat(text).contains("lossprobe_mesh_pair_up{" + name + ",source=\"a\",target=\"c\"} 1.0",
            "lossprobe_mesh_pair_up{" + name + ",source=\"c\",target=\"a\"} 0.0",
            // The last mesh's counts: gauges, not counters that reset every night.
            "# TYPE lossprobe_mesh_lost_messages gauge",
            "lossprobe_mesh_lost_messages{" + name + ",offered_rate=\"50000\",source=\"c\",target=\"b\","
                + "transport=\"udp\"} 500.0",
            "# TYPE lossprobe_mesh_delay_seconds summary",
            "lossprobe_mesh_delay_seconds{" + name + ",offered_rate=\"10000\",source=\"a\",target=\"b\","
                + "transport=\"udp\",quantile=\"0.99\"}",
            "lossprobe_mesh_delay_seconds_count{" + name + ",offered_rate=\"10000\",source=\"a\",target=\"b\",",
            "lossprobe_mesh_check_passed{" + name + ",source=\"c\",target=\"b\"} 0.0",
            "lossprobe_mesh_check_failures{" + name + "} 4.0", "lossprobe_mesh_end_timestamp_seconds{" + name + "}");
        assertThat(text).doesNotContain("_total", "percentile=", "level=");
        assertThat(MeshPrometheus.render(mesh, "nightly-udp", Optional.empty()))
            .contains("lossprobe_mesh_pair_up{name=\"nightly-udp\",source=\"a\",target=\"c\"} 1.0");
        Path promtool = Path.of("/usr/bin/promtool");
        assumeTrue(Files.isExecutable(promtool), "promtool not installed (apt-get install prometheus)");
        Process p = new ProcessBuilder(new ArrayList<>(List.of(promtool.toString(), "check", "metrics")))
            .redirectInput(prom.toFile()).redirectErrorStream(true).start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
    }
}
