package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.transport.Transports;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Renders reports and comparisons in headless Chromium, every chart kind among them, from real UDP runs on
 * loopback (one port made lossy by the engine's send filter) and from edited result files for what a loopback run
 * cannot give (retransmits, a second host, echo, intervals, searches, a hostile file). In the browser each chart
 * must have drawing in it, no NaN, no negative count, no text cut off, too small or overlapping another.
 */
@Tag("system")
class HtmlReportSystemTest {
    private static final int LOSSY_FLOW = 3;
    /** Every kind of chart the analysis draws. */
    static final Set<String> KINDS = Set.of("loss-curve", "achieved", "retransmits", "delay-bands", "percentiles",
        "rtt-bands", "heatmap", "intervals", "trend", "compare-loss", "compare-delay", "delay-overview");

    /** The second step loses every 10th message of one port. */
    private static final StepHooks LOSSY_PORT_AT_STEP_1 = new StepHooks() {
        @Override
        public SendFilter sendFilter(String transport, int step) {
            return step == 1 ? (flow, seq) -> flow == LOSSY_FLOW && seq % 10 == 0 : SendFilter.NONE;
        }
    };

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void everyChartKindRendersReadablyInChromium() throws Exception {
        assumeTrue(Files.isExecutable(Chromium.BINARY), "chromium not installed (apt-get install chromium)");
        Chromium chromium = new Chromium(dir);
        Path newer = realRun();
        ObjectNode withExtras = Fixtures.withIntervalsAndSearch(
            (ObjectNode) ResultFiles.mapper().readTree(newer.toFile()));
        LoadedResult real = Fixtures.load(dir, "newer.json", withExtras);
        ObjectNode older = (ObjectNode) ResultFiles.mapper().readTree(newer.toFile());
        older.put("startedAt", real.startedAt().minusSeconds(86_400).toString());
        LoadedResult old = Fixtures.load(dir, "older.json", older);
        Policy strict = Policy.read(Files.writeString(dir.resolve("p.json"), "{\"defaults\":{\"maxLossPercent\":0}}"));

        ObjectNode repairs = Fixtures.threeTransports();
        for (int step : new int[] {2, 3}) {
            ((ObjectNode) repairs.withArray("steps").get(step).get("transportCounters")).put("tcp.totalRetrans",
                12 * step);
        }
        ((ObjectNode) repairs.withArray("steps").get(5).get("transportCounters")).put("aeron.naksSent", 9)
            .put("aeron.retransmitsSent", 4);
        LoadedResult three = Fixtures.load(dir, "three.json", repairs);
        LoadedResult echo = Fixtures.load(dir, "echo.json", Fixtures.echo());
        LoadedResult twoHosts = Fixtures.load(dir, "two.json", Fixtures.twoHosts("server.example", false));
        LoadedResult hostile = Fixtures.load(dir, "hostile.json", HostileResultTest.hostile());

        Map<String, String> pages = new java.util.LinkedHashMap<>();
        pages.put("nightly", HtmlReport.render(List.of(old, real), Optional.of(strict), m -> { }));
        pages.put("three", HtmlReport.render(List.of(three), m -> { }));
        pages.put("echo", HtmlReport.render(List.of(echo), m -> { }));
        pages.put("two-hosts", HtmlReport.render(List.of(twoHosts), m -> { }));
        pages.put("hostile", HtmlReport.render(List.of(hostile), m -> { }));
        pages.put("compare", new ComparisonReport(old, real, Comparison.Tolerance.DEFAULT).html());
        pages.put("compare-plans-differ", new ComparisonReport(Fixtures.load(dir, "s.json", Fixtures.sample()),
            three, Comparison.Tolerance.DEFAULT).html());

        Set<String> kinds = new LinkedHashSet<>();
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, String> p : pages.entrySet()) {
            Chromium.Layout layout = chromium.layout(p.getValue(), 1400);
            assertThat(layout.figures()).as(p.getKey()).isNotEmpty();
            layout.figures().forEach(f -> kinds.add(f.substring(f.indexOf(' ') + 1)));
            layout.problems().forEach(x -> problems.add(p.getKey() + ": " + x));
        }
        assertThat(problems).isEmpty();
        assertThat(kinds).containsAll(KINDS);

        // In a real browser, the hostile file made no element.
        Path hostilePage = Files.writeString(dir.resolve("hostile.html"), pages.get("hostile"));
        String dom = chromium.dom(hostilePage);
        assertThat(dom).doesNotContain("<img").doesNotContain("<script").doesNotContain("<x>")
            .contains("&lt;script&gt;alert(1)&lt;/script&gt;");

        // The nightly page as drawn: the lossy port's cell in the darkest class, zero loss pale green, lines.
        Path html = Files.writeString(dir.resolve("report.html"), pages.get("nightly"));
        BufferedImage img = ImageIO.read(chromium.screenshot(html, dir.resolve("report.png"), 1400, 9000).toFile());
        int zeroLossGreen = 0;
        int tenPercentRed = 0;
        int udpBlue = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                int rgb = img.getRGB(x, y) & 0xffffff;
                zeroLossGreen += near(rgb, 0xc7e9c0) ? 1 : 0;
                tenPercentRed += near(rgb, 0x67000d) ? 1 : 0;
                udpBlue += near(rgb, 0x1f77b4) ? 1 : 0;
            }
        }
        assertThat(zeroLossGreen).as("zero-loss heatmap cells").isGreaterThan(5_000);
        assertThat(tenPercentRed).as("the lossy port's heatmap cell (10 %: the >= 10 class)").isGreaterThan(300);
        assertThat(udpBlue).as("udp's lines").isGreaterThan(500);
    }

    /**
     * What {@code run --search ndr,pdr --sizes 64,512 --interval 100ms} writes, from a real UDP run on loopback (one
     * port losing every 10th message at the second level, so intervals show loss), drawn by Chromium: the search's
     * findings in the verdict and on the loss curve, a loss curve per size, the intervals, nothing misdrawn.
     */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void aRealSearchWithSizesAndIntervalsRendersInChromium() throws Exception {
        assumeTrue(Files.isExecutable(Chromium.BINARY), "chromium not installed (apt-get install chromium)");
        long ms = TimeUnit.MILLISECONDS.toNanos(1);
        Plan plan = new Plan(List.of("udp"), 4, 44400, List.of(Level.of(2_000), Level.of(8_000)), 300 * ms,
            100 * ms, 200 * ms, 64, "127.0.0.1", Plan.STREAM, 0, Map.of(), List.of(64, 512),
            new io.lossprobe.core.plan.SearchPlan(List.of("ndr", "pdr"), 0.005, 0.05, 400, 20_000, 100 * ms, 10,
                List.of()), 100 * ms);
        RunResult run = new RunEngine(plan, Transports.available(), Map.of(), new RunListener() {
        }, LOSSY_PORT_AT_STEP_1).run();
        assertThat(run.search()).hasSize(4);
        Path file = dir.resolve("search.json");
        ResultFiles.write(file, run);
        LoadedResult loaded = LoadedResult.read(file);
        assertThat(loaded.extras().searches()).hasSize(4).allMatch(x -> x.messageSize() > 0);
        assertThat(loaded.intervals(loaded.run().steps().get(1))).hasSize(3);
        String page = HtmlReport.render(List.of(loaded), m -> { });
        Chromium.Layout layout = new Chromium(dir).layout(page, 1400);
        assertThat(layout.problems()).isEmpty();
        assertThat(layout.figures()).contains("chart-loss loss-curve", "intervals-0 intervals",
            "intervals-1 intervals");
        assertThat(page).contains("udp 64B NDR", "udp 512B PDR (loss &lt;= 0.50 %)", "udp 64B", "udp 512B");
    }

    /** A real UDP run on loopback: 8 ports, three levels; one port loses every 10th message at the second. */
    private Path realRun() throws Exception {
        Plan plan = new Plan(List.of("udp"), 8, 44200, List.of(Level.of(2_000), Level.of(8_000), Level.of(20_000)),
            TimeUnit.MILLISECONDS.toNanos(500), TimeUnit.MILLISECONDS.toNanos(200),
            TimeUnit.MILLISECONDS.toNanos(300), 64, "127.0.0.1");
        RunResult run = new RunEngine(plan, Transports.available(), Map.of(), new RunListener() {
        }, LOSSY_PORT_AT_STEP_1).run();
        assertThat(run.steps()).hasSize(3);
        assertThat(run.steps().get(1).flows().get(LOSSY_FLOW).counts().lost()).isPositive();
        Path file = dir.resolve("real.json");
        ResultFiles.write(file, run);
        return file;
    }

    private static boolean near(int rgb, int target) {
        return Math.abs((rgb >> 16 & 0xff) - (target >> 16 & 0xff)) < 6
            && Math.abs((rgb >> 8 & 0xff) - (target >> 8 & 0xff)) < 6 && Math.abs((rgb & 0xff) - (target & 0xff)) < 6;
    }
}
