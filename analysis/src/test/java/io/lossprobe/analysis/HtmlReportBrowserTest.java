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
 * sentence (or the names of the transports that lost nothing) is shown, and both tables fit a 1400 px window; with
 * a {@code --probe} flow, the round trip under load is drawn and named, and the wider speed table still fits.
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

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theRoundTripUnderLoadRendersAndTheSpeedTableStillFits() throws Exception {
        Chromium chromium = Chromium.installed(dir);
        String probed = HtmlReport.render(List.of(Fixtures.load(dir, "probe.json",
            Fixtures.withProbe(Fixtures.threeTransports(), 2))), m -> { });
        Chromium.Layout layout = chromium.layout(probed, 1400, "#chart-probe", "#probe-sentence", "table.speed");
        assertThat(layout.console()).as("console").isEmpty();
        assertThat(layout.problems()).isEmpty();
        assertThat(layout.figures()).contains("chart-probe probe-rtt");
        assertThat(layout.shown()).containsOnlyKeys("#chart-probe", "#probe-sentence", "table.speed");
        assertThat(layout.shown().get("#probe-sentence")).startsWith("A 1k/s echo flow on port 45402 beside every "
            + "step: round trip p99 rose from 60 us at 10k to 2.1 ms at 50k on udp;");
        assertThat(layout.shown().get("table.speed")).contains("probe p99 ms").contains("2.100");
    }

    /** A real multicast run (sample-multicast.json): the receiver-by-flow matrix is shown, fits and says who lost. */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void theReceiverByFlowMatrixOfAMulticastRunIsShownAndFits() throws Exception {
        Chromium chromium = Chromium.installed(dir);
        String page = HtmlReport.render(List.of(ReceiverMatrixTest.sample()), m -> { });
        Chromium.Layout layout = chromium.layout(page, 1400, "#receivers", "table.receivers", "table.delivery");
        assertThat(layout.console()).as("console").isEmpty();
        assertThat(layout.problems()).isEmpty();
        assertThat(layout.shown()).containsOnlyKeys("#receivers", "table.receivers", "table.delivery");
        assertThat(layout.shown().get("table.receivers")).contains("198.18.0.102 (worst)").contains("65 / 1.300%")
            .contains("all receivers");
    }
}
