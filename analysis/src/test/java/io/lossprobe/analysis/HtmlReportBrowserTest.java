package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The top of the report and its two summary tables as headless Chromium lays them out, from edited result files
 * (no run, no port opened): the page writes nothing to the console, the charts pass the layout check, the no-loss
 * sentence (or the names of the transports that lost nothing) is shown, and both tables fit a 1400 px window.
 */
class HtmlReportBrowserTest {
    private static final String[] SHOWN = {"#no-loss", "#lossless", "#chart-delay", "#chart-loss", "table.delivery",
        "table.speed"};

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void theSentenceIsShownTheTablesFitAndTheConsoleStaysEmpty() throws Exception {
        Chromium chromium = Chromium.installed(dir);

        // The checks can fail: a hidden element is not "shown", and a console message is caught.
        Chromium.Layout control = chromium.layout("<!DOCTYPE html><html><body><p id=\"seen\">seen</p>"
            + "<p id=\"hidden\" style=\"display:none\">hidden</p><p id=\"tiny\" style=\"font-size:6px\">tiny</p>"
            + "<img src=\"data:,\" alt=\"\" onerror=\"console.error('console-control')\"></body></html>", 1400,
            "#seen", "#hidden", "#tiny");
        assertThat(control.shown()).containsOnlyKeys("#seen");
        assertThat(control.console()).anyMatch(l -> l.contains("console-control"));

        String none = HtmlReport.render(List.of(Fixtures.load(dir, "none.json", Fixtures.threeTransports())),
            m -> { });
        Chromium.Layout clean = chromium.layout(none, 1400, SHOWN);
        assertThat(clean.console()).as("console").isEmpty();
        assertThat(clean.problems()).isEmpty();
        assertThat(clean.figures()).contains("chart-delay delay-overview").noneMatch(f -> f.contains("loss-curve"));
        assertThat(clean.shown()).containsOnlyKeys("#no-loss", "#chart-delay", "table.delivery", "table.speed");
        assertThat(clean.shown().get("#no-loss"))
            .isEqualTo("No step lost a message: udp, tcp and aeron delivered every message they sent at 10k and 50k.");

        String some = HtmlReport.render(List.of(Fixtures.load(dir, "some.json",
            HtmlReportTest.udpLostAt50k(Fixtures.threeTransports()))), m -> { });
        Chromium.Layout lossy = chromium.layout(some, 1400, SHOWN);
        assertThat(lossy.console()).as("console").isEmpty();
        assertThat(lossy.problems()).isEmpty();
        assertThat(lossy.figures()).contains("chart-loss loss-curve").noneMatch(f -> f.contains("delay-overview"));
        assertThat(lossy.shown()).containsOnlyKeys("#lossless", "#chart-loss", "table.delivery", "table.speed");
        assertThat(lossy.shown().get("#lossless")).startsWith("tcp and aeron lost no message at any level");
        assertThat(lossy.shown().get("table.delivery")).contains("49,400").contains("600");
    }
}
