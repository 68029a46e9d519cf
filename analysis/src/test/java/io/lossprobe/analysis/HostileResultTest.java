package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A result file is input from wherever it came from: a hostile one (markup in transport names, warnings, plan
 * fields, hosts, counter names, searches, the error) must come out as text in every HTML and SVG the analysis
 * writes, never as markup, attributes or ids.
 */
class HostileResultTest {
    /** Each tries another way out: an element, an attribute, an id, a title, an XML section. */
    static final List<String> PAYLOADS = List.of("<script>alert(1)</script>", "\"><img src=x onerror=alert(2)>",
        "' onmouseover='alert(3)' x='", "</title><svg onload=alert(4)>", "]]><x>&amp;");

    @TempDir
    Path dir;

    /** The sample with a payload in every string a report shows. */
    static ObjectNode hostile() {
        ObjectNode root = Fixtures.withIntervalsAndSearch(Fixtures.withStep(1, s -> Fixtures.lose(s, 600)));
        String all = String.join(" ", PAYLOADS);
        int i = 0;
        for (var step : root.withArray("steps")) {
            ObjectNode s = (ObjectNode) step;
            s.put("transport", PAYLOADS.get(i++ % PAYLOADS.size()));
            s.putArray("warnings").add(all).add(PAYLOADS.get(1));
            ((ObjectNode) s.get("attribution")).put(PAYLOADS.get(0), 1);
            ((ObjectNode) s.get("hostCounters")).put("dev." + PAYLOADS.get(1) + ".rxBytes", 1_000_000)
                .put("dev." + PAYLOADS.get(1) + ".txBytes", 1_000_000);
            ((ObjectNode) s.get("transportCounters")).put(PAYLOADS.get(3) + "retrans", 7);
        }
        ObjectNode plan = (ObjectNode) root.get("plan");
        plan.putArray("transports").add(PAYLOADS.get(0)).add(PAYLOADS.get(1));
        plan.put("bindAddress", PAYLOADS.get(2)).put("mode", "stream");
        plan.putObject("transportOptions").put(PAYLOADS.get(3), PAYLOADS.get(4));
        ObjectNode env = (ObjectNode) root.get("environment");
        env.put("host", PAYLOADS.get(1)).put("kernel", PAYLOADS.get(0)).put("jvm", PAYLOADS.get(2))
            .put("os", PAYLOADS.get(3)).put("lossprobeVersion", PAYLOADS.get(4));
        env.putObject("transportSettings").put(PAYLOADS.get(0), 1);
        ((ObjectNode) env.get("socketBuffers")).put(PAYLOADS.get(1), 2);
        root.put("status", PAYLOADS.get(0)).put("error", all).put("startedAt", PAYLOADS.get(1));
        for (var s : root.withArray("search")) {
            ((ObjectNode) s).put("transport", PAYLOADS.get(0)).put("criterion", PAYLOADS.get(3));
        }
        return root;
    }

    @Test
    void aHostileResultComesOutAsTextInTheReport() throws Exception {
        LoadedResult r = Fixtures.load(dir, "x<script>.json", hostile());
        // A second, clean run so the trend is drawn too, and a policy so checks are named.
        LoadedResult clean = Fixtures.load(dir, "clean.json", Fixtures.sample());
        Policy policy = Policy.read(java.nio.file.Files.writeString(dir.resolve("p.json"),
            "{\"defaults\":{\"maxLossPercent\":0}}"));
        String page = HtmlReport.render(List.of(clean, r), Optional.of(policy), m -> { });
        assertNothingInjected(page);
        // The payloads are there, as text.
        assertThat(page).contains("&lt;script&gt;alert(1)&lt;/script&gt;").contains("&quot;&gt;&lt;img src=x");
    }

    @Test
    void aHostileResultComesOutAsTextInTheComparison() {
        LoadedResult a = Fixtures.load(dir, "a.json", Fixtures.sample());
        LoadedResult b = Fixtures.load(dir, "b.json", hostile());
        ComparisonReport c = new ComparisonReport(a, b, Comparison.Tolerance.DEFAULT);
        assertNothingInjected(c.html());
        assertThat(c.markdown()).doesNotContain("<script").doesNotContain("<img").doesNotContain("<svg");
        assertThat(SummaryTable.of(List.of(b)).markdown()).doesNotContain("<script").doesNotContain("<img");
        assertThat(SummaryTable.of(List.of(b)).html(true)).doesNotContain("<script").doesNotContain("<img");
    }

    /**
     * No payload escaped its text: no element the page does not make itself, no attribute outside the ones it
     * writes, every id of the safe alphabet, and as many SVGs opened as closed.
     */
    static void assertNothingInjected(String page) {
        assertThat(page).doesNotContain("<script").doesNotContain("<img").doesNotContain("<x>")
            .doesNotContain("<svg onload").doesNotContain("' onmouseover=").doesNotContain("\" onerror")
            .doesNotContain("]]>");
        Matcher ids = Pattern.compile("\\bid=([\"'])(.*?)\\1").matcher(page);
        int n = 0;
        while (ids.find()) {
            assertThat(ids.group(2)).as("id").matches("[A-Za-z0-9_-]+");
            n++;
        }
        assertThat(n).isGreaterThan(10);
        assertThat(count(page, "<svg ")).isEqualTo(count(page, "</svg>")).isPositive();
        assertThat(count(page, "<title>")).isEqualTo(count(page, "</title>"));
        Matcher tags = Pattern.compile("<([a-zA-Z][a-zA-Z0-9]*)").matcher(page);
        while (tags.find()) {
            assertThat(tags.group(1)).as("element").isIn("html", "head", "meta", "title", "style", "body", "h1",
                "h2", "h3", "p", "b", "i", "a", "code", "pre", "div", "ul", "li", "table", "thead", "tbody", "tr",
                "th", "td", "dl", "dt", "dd", "br", "figure", "svg", "defs", "clipPath", "path", "g", "rect",
                "line", "text", "circle", "ellipse", "polygon", "polyline", "span", "image");
        }
    }

    private static int count(String text, String needle) {
        int c = 0;
        for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
            c++;
        }
        return c;
    }
}
