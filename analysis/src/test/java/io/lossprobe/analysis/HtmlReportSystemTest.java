package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.pacing.SendFilter;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.transport.Transports;
import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Renders a report from real UDP runs on loopback (one port made lossy by the engine's send filter), opens it in
 * headless Chromium, and checks that every chart and the heatmap survive rendering and are drawn.
 */
@Tag("system")
class HtmlReportSystemTest {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final int LOSSY_FLOW = 3;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void reportOfRealRunsRendersInChromium() throws Exception {
        assumeTrue(Files.isExecutable(CHROMIUM), "chromium not installed (apt-get install chromium)");
        Plan plan = new Plan(List.of("udp"), 8, 44200, List.of(Level.of(2_000), Level.of(8_000)),
            TimeUnit.MILLISECONDS.toNanos(500), TimeUnit.MILLISECONDS.toNanos(200),
            TimeUnit.MILLISECONDS.toNanos(300), 64, "127.0.0.1");
        // One port loses every 10th message at the second level: a port-specific problem the heatmap must show.
        StepHooks lossyPort = new StepHooks() {
            @Override
            public SendFilter sendFilter(String transport, int step) {
                return step == 1 ? (flow, seq) -> flow == LOSSY_FLOW && seq % 10 == 0 : SendFilter.NONE;
            }
        };
        RunResult run = new RunEngine(plan, Transports.available(), Map.of(), new RunListener() {
        }, lossyPort).run();
        assertThat(run.steps()).hasSize(2);
        assertThat(run.steps().get(1).flows().get(LOSSY_FLOW).counts().lost()).isPositive();
        Path newer = dir.resolve("newer.json");
        ResultFiles.write(newer, run);
        // An older run of the same shape (the same result, dated a day earlier) so the report draws the trend.
        ObjectNode older = (ObjectNode) ResultFiles.mapper().readTree(newer.toFile());
        older.put("startedAt", java.time.Instant.parse(run.startedAt()).minusSeconds(86_400).toString());
        Path olderFile = Fixtures.write(dir, "older.json", older);

        List<LoadedResult> loaded = LoadedResult.readAll(List.of(newer, olderFile), m -> { });
        assertThat(loaded.get(1).file()).isEqualTo(newer);
        List<String> progress = new ArrayList<>();
        Path html = dir.resolve("report.html");
        Files.writeString(html, HtmlReport.render(loaded, progress::add));
        assertThat(progress).isNotEmpty();
        String page = Files.readString(html);
        assertThat(page).doesNotContain("http://www.w3.org/1999/xlink\" href=\"http", "<script", "src=\"http");

        String dom = chromium(html, "--dump-dom");
        for (String id : List.of("chart-loss", "chart-achieved", "chart-retransmits", "chart-delay", "heatmap-udp",
            "trend-loss", "trend-achieved", "trend-p99")) {
            String figure = figure(dom, id);
            assertThat(figure).as(id).contains("<svg");
            assertThat(count(figure, "<path") + count(figure, "<line") + count(figure, "<rect"))
                .as(id + " drawing elements").isGreaterThan(10);
        }
        // The heatmap has one block per port and level: 8 x 2.
        assertThat(count(figure(dom, "heatmap-udp"), "<rect")).isGreaterThanOrEqualTo(16);

        Path png = dir.resolve("report.png");
        chromium(html, "--screenshot=" + png);
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img.getWidth()).isEqualTo(1400);
        int nonWhite = 0;
        int zeroLossGreen = 0;
        int lossRed = 0;
        int lineBlue = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                int rgb = img.getRGB(x, y) & 0xffffff;
                if (rgb != 0xffffff) {
                    nonWhite++;
                }
                int r = rgb >> 16 & 0xff;
                int g = rgb >> 8 & 0xff;
                int b = rgb & 0xff;
                if (near(rgb, 0xc7e9c0)) {
                    zeroLossGreen++;
                } else if (r > 180 && g < 200 && b < 90 && r - g > 40) {
                    lossRed++;
                } else if (near(rgb, 0x1f77b4)) {
                    lineBlue++;
                }
            }
        }
        assertThat(nonWhite).as("non-white pixels").isGreaterThan(1400 * 3000 / 50);
        assertThat(zeroLossGreen).as("zero-loss heatmap cells").isGreaterThan(5_000);
        assertThat(lossRed).as("the lossy port's heatmap cell").isGreaterThan(300);
        assertThat(lineBlue).as("chart lines").isGreaterThan(200);
    }

    private static boolean near(int rgb, int target) {
        return Math.abs((rgb >> 16 & 0xff) - (target >> 16 & 0xff)) < 6
            && Math.abs((rgb >> 8 & 0xff) - (target >> 8 & 0xff)) < 6 && Math.abs((rgb & 0xff) - (target & 0xff)) < 6;
    }

    private static String figure(String dom, String id) {
        Matcher m = Pattern.compile("<figure class=\"chart\" id=\"" + id + "\">(.*?)</figure>", Pattern.DOTALL)
            .matcher(dom);
        assertThat(m.find()).as("figure " + id + " in the rendered DOM").isTrue();
        return m.group(1);
    }

    private static int count(String text, String needle) {
        int n = 0;
        for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
            n++;
        }
        return n;
    }

    private String chromium(Path html, String action) throws Exception {
        Path profile = Files.createTempDirectory(dir, "chromium-profile");
        Path out = dir.resolve("chromium-" + System.nanoTime() + ".out");
        Process p = new ProcessBuilder(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--user-data-dir=" + profile, action, "--window-size=1400,3000",
            html.toUri().toString())
            .redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish within 90 s");
        }
        assertThat(p.exitValue()).as("chromium exit").isZero();
        return Files.readString(out, StandardCharsets.UTF_8);
    }
}
