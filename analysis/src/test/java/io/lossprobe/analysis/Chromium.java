package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.result.ResultFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Headless Chromium for the report's tests: the DOM after the page ran, a screenshot, and a layout check of every
 * chart made in the browser itself (a test-only script appended to a copy of the page, since the report has none),
 * with what the page wrote to the browser's console (Chromium logs every console message and uncaught error to
 * stderr with {@code --enable-logging=stderr}; a page without scripts should write none).
 */
final class Chromium {
    static final Path BINARY = Path.of("/usr/bin/chromium");

    /**
     * Looks at every {@code figure.chart} as laid out: an SVG of some size with drawing in it; no text saying NaN,
     * Infinity, null or undefined; no negative tick on a chart that counts; no text smaller than 7 px, outside its
     * chart or overlapping another text of the chart by more than a third of the smaller one's height.
     */
    private static final String LAYOUT_CHECK = """
        <script>(function(){
          const problems=[]; const figs=[...document.querySelectorAll('figure.chart')];
          for (const f of figs) {
            const id=f.id, svg=f.querySelector('svg');
            if (!svg) { problems.push(id+': no svg'); continue; }
            const sr=svg.getBoundingClientRect();
            if (sr.width<200||sr.height<150) problems.push(id+': svg only '+sr.width+'x'+sr.height);
            const drawn=svg.querySelectorAll('path,rect,line').length;
            if (drawn<20) problems.push(id+': only '+drawn+' drawing elements');
            if (/NaN|Infinity/.test(svg.outerHTML)) problems.push(id+': NaN or Infinity in the SVG');
            const boxes=[];
            for (const t of svg.querySelectorAll('text')) {
              const s=t.textContent.trim(); if (!s) continue;
              if (/NaN|Infinity|null|undefined/.test(s)) problems.push(id+': text "'+s+'"');
              if (f.dataset.counts==='true' && /^[-\\u2212]\\s*\\d/.test(s)) problems.push(id+': negative "'+s+'" on a count chart');
              const r=t.getBoundingClientRect();
              if (r.height<7) problems.push(id+': text "'+s+'" only '+r.height.toFixed(1)+'px high');
              if (r.left<sr.left-1||r.right>sr.right+1||r.top<sr.top-1||r.bottom>sr.bottom+1)
                problems.push(id+': text "'+s+'" outside the chart');
              boxes.push([s,r]);
            }
            if (boxes.length<4) problems.push(id+': only '+boxes.length+' texts');
            for (let i=0;i<boxes.length;i++) for (let j=i+1;j<boxes.length;j++) {
              const a=boxes[i][1], b=boxes[j][1];
              const ox=Math.min(a.right,b.right)-Math.max(a.left,b.left);
              const oy=Math.min(a.bottom,b.bottom)-Math.max(a.top,b.top);
              if (ox>1 && oy>Math.min(a.height,b.height)/3) problems.push(id+': "'+boxes[i][0]+'" overlaps "'+boxes[j][0]+'"');
            }
          }
          const shown={};
          for (const sel of VISIBLE) {
            const e=document.querySelector(sel); if (!e) continue;
            const r=e.getBoundingClientRect(), st=getComputedStyle(e);
            if (r.width>0 && r.height>0 && st.display!=='none' && st.visibility==='visible' && st.opacity!=='0'
                && r.left>=0 && r.right<=window.innerWidth && parseFloat(st.fontSize)>=10) shown[sel]=e.innerText;
          }
          const pre=document.createElement('pre'); pre.id='layout-check';
          pre.textContent=JSON.stringify({figures:figs.map(f=>f.id+' '+f.dataset.kind), problems:problems,
            shown:shown});
          document.body.appendChild(pre);
        })();</script>
        """;
    private static final Pattern RESULT = Pattern.compile("<pre id=\"layout-check\">(.*?)</pre>", Pattern.DOTALL);

    private final Path work;

    Chromium(Path work) {
        this.work = work;
    }

    /** A Chromium working in {@code work}; the test is skipped (not failed) where none is installed. */
    static Chromium installed(Path work) {
        assumeTrue(Files.isExecutable(BINARY), "chromium not installed (apt-get install chromium)");
        return new Chromium(work);
    }

    /**
     * What the layout check found in {@code page}: each figure's "id kind", each problem in words, every message
     * the browser's console received while the page loaded, and, of the selectors asked about, the text of each
     * element shown (laid out with a size, not hidden, within the window's width, its text 10 px or more).
     */
    record Layout(List<String> figures, List<String> problems, List<String> console, Map<String, String> shown) {
    }

    Layout layout(String page, int windowWidth, String... visible) throws Exception {
        assertThat(page).as("the report itself runs no script").doesNotContain("<script");
        Path html = work.resolve("checked-" + System.nanoTime() + ".html");
        String selectors = ResultFiles.mapper().writeValueAsString(List.of(visible));
        Files.writeString(html, page.replace("</body>",
            LAYOUT_CHECK.replace("(function(){", "(function(){const VISIBLE=" + selectors + ";") + "</body>"));
        List<String> console = new ArrayList<>();
        String dom = run(html, "--dump-dom", windowWidth, 3000, console);
        Matcher m = RESULT.matcher(dom);
        assertThat(m.find()).as("the layout check ran").isTrue();
        JsonNode r = ResultFiles.mapper().readTree(unescape(m.group(1)));
        List<String> figures = new ArrayList<>();
        r.get("figures").forEach(n -> figures.add(n.asText()));
        List<String> problems = new ArrayList<>();
        r.get("problems").forEach(n -> problems.add(n.asText()));
        Map<String, String> shown = new LinkedHashMap<>();
        r.get("shown").fields().forEachRemaining(e -> shown.put(e.getKey(), e.getValue().asText()));
        return new Layout(figures, problems, console, shown);
    }

    /** The page as Chromium draws it in a window of {@code width} x {@code height}. */
    Path screenshot(Path html, Path png, int width, int height) throws Exception {
        run(html, "--screenshot=" + png.toAbsolutePath(), width, height, new ArrayList<>());
        return png;
    }

    String dom(Path html) throws Exception {
        return run(html, "--dump-dom", 1400, 3000, new ArrayList<>());
    }

    /** Runs Chromium on {@code html}; the console's messages go to {@code console}, one line each. */
    private String run(Path html, String action, int width, int height, List<String> console)
        throws IOException, InterruptedException {
        Path profile = Files.createTempDirectory(work, "chromium-profile");
        Path out = work.resolve("chromium-" + System.nanoTime() + ".out");
        Path err = work.resolve("chromium-" + System.nanoTime() + ".err");
        Process p = new ProcessBuilder(BINARY.toString(), "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
            // A budget of virtual time: the screenshot waits for layout and paint to finish.
            "--disable-sync", "--hide-scrollbars", "--virtual-time-budget=2000", "--user-data-dir=" + profile,
            "--enable-logging=stderr", "--v=0", action, "--window-size=" + width + "," + height,
            html.toUri().toString())
            .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish within 90 s");
        }
        assertThat(p.exitValue()).as("chromium exit").isZero();
        // "[pid:tid:time:INFO:CONSOLE:1] "message", source: file:///... (1)", whatever the message's level.
        Files.readAllLines(err, StandardCharsets.UTF_8).stream().filter(l -> l.contains(":CONSOLE"))
            .forEach(console::add);
        return Files.readString(out, StandardCharsets.UTF_8);
    }

    private static String unescape(String html) {
        return html.replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&#39;", "'")
            .replace("&amp;", "&");
    }
}
