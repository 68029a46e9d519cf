package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.result.ResultFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Not a check: draws the screenshots of docs/report.md from real result files, one PNG per chart kind, with
 * headless Chromium. Runs only when asked:
 *
 * <pre>
 * mvn -B -o -q verify -pl analysis -am -Dtest=ReportImagesTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dlossprobe.docInputs=/path/to/results -Dlossprobe.docImages=$PWD/docs/images
 * </pre>
 *
 * The inputs directory holds {@code default.json} (a default run, with --hlog), {@code lossy.json} (a run with a
 * knee), {@code echo.json} (echo mode) and {@code nightly/*.json} (several runs for the trend).
 */
@EnabledIfSystemProperty(named = "lossprobe.docImages", matches = ".+")
class ReportImagesTest {
    @TempDir
    Path dir;

    @Test
    void drawTheDocumentationImages() throws Exception {
        Path in = Path.of(System.getProperty("lossprobe.docInputs"));
        Path out = Path.of(System.getProperty("lossprobe.docImages"));
        Files.createDirectories(out);
        Chromium chromium = new Chromium(dir);
        LoadedResult def = LoadedResult.read(in.resolve("default.json"));
        LoadedResult lossy = LoadedResult.read(in.resolve("lossy.json"));
        LoadedResult echo = LoadedResult.read(in.resolve("echo.json"));
        List<Path> nightlyFiles;
        try (Stream<Path> s = Files.list(in.resolve("nightly"))) {
            nightlyFiles = s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
        List<LoadedResult> nightly = LoadedResult.readAll(nightlyFiles, m -> { });
        Policy policy = Policy.read(in.resolve("policy.json"));
        // Intervals are not in result files yet: the lossy run with hand-made ones, in the documented shape.
        LoadedResult withIntervals = Fixtures.load(dir, "lossy-intervals.json",
            Fixtures.withIntervalsAndSearch((ObjectNode) ResultFiles.mapper().readTree(in.resolve("lossy.json")
                .toFile())));

        // The top of the default run's report: the verdict and the loss curve come first.
        Path top = Files.writeString(dir.resolve("top.html"), HtmlReport.render(List.of(def), m -> { }));
        chromium.screenshot(top, out.resolve("report-top.png"), 1200, 860);

        List<Shot> shots = new ArrayList<>();
        shots.add(new Shot("loss-curve", lossy, "chart-loss"));
        shots.add(new Shot("achieved", lossy, "chart-achieved"));
        shots.add(new Shot("retransmits", lossy, "chart-retransmits"));
        shots.add(new Shot("delay-bands", def, "delay-0"));
        shots.add(new Shot("percentiles", def, "percentiles-delay-0"));
        shots.add(new Shot("heatmap", lossy, "heatmap-udp"));
        shots.add(new Shot("rtt-bands", echo, "rtt-1"));
        shots.add(new Shot("intervals", withIntervals, "intervals-0"));
        for (Shot s : shots) {
            ChartParts.Figure f = HtmlReport.figures(List.of(s.run()), Optional.empty()).stream()
                .filter(x -> x.id().equals(s.id())).findFirst().orElseThrow(() -> new AssertionError(s.id()));
            save(chromium, f, out.resolve(s.name() + ".png"));
        }
        // The trend at the third level (100k in the nightly plan), where the example policy fails some runs.
        ChartParts.Figure trend = HtmlReport.figures(nightly, Optional.of(policy)).stream()
            .filter(x -> x.id().equals("trend-loss-2")).findFirst().orElseThrow();
        save(chromium, trend, out.resolve("trend.png"));
        Palette palette = new Palette();
        HistoryCharts history = new HistoryCharts(palette);
        List<StepMetrics> a = StepMetrics.all(def.run());
        List<StepMetrics> b = StepMetrics.all(lossy.run());
        save(chromium, history.compareLoss("compare-loss", a, b), out.resolve("compare-loss.png"));
        save(chromium, history.compareDelay("compare-delay-", a, b, new DelayCharts(palette)).get(0),
            out.resolve("compare-delay.png"));
        try (Stream<Path> s = Files.list(out)) {
            s.filter(p -> p.toString().endsWith(".png")).forEach(p -> {
                try {
                    assertThat(Files.size(p)).as(p.toString()).isLessThan(200_000);
                    System.out.printf("%s %d bytes%n", p.getFileName(), Files.size(p));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
        }
    }

    private record Shot(String name, LoadedResult run, String id) {
    }

    /** One chart alone, at its own size. */
    private void save(Chromium chromium, ChartParts.Figure f, Path png) throws Exception {
        Path html = Files.writeString(dir.resolve(f.id() + ".html"),
                "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
            + "<style>body{margin:0}figure{margin:0}</style></head><body>" + ChartSvg.figure(f, f.id())
            + "</body></html>");
        chromium.screenshot(html, png, f.width(), f.height());
    }
}
