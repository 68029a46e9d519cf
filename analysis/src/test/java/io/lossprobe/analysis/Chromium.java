package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.result.ResultFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Headless Chromium for the report's tests: the DOM after the page ran, a screenshot, and a layout check of every
 * chart made in the browser itself (a test-only script appended to a copy of the page, since the report has none).
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
          const pre=document.createElement('pre'); pre.id='layout-check';
          pre.textContent=JSON.stringify({figures:figs.map(f=>f.id+' '+f.dataset.kind), problems:problems});
          document.body.appendChild(pre);
        })();</script>
        """;
    private static final Pattern RESULT = Pattern.compile("<pre id=\"layout-check\">(.*?)</pre>", Pattern.DOTALL);

    private final Path work;

    Chromium(Path work) {
        this.work = work;
    }

    /** What the layout check found in {@code page}: each figure's "id kind", and each problem in words. */
    record Layout(List<String> figures, List<String> problems) {
    }

    Layout layout(String page, int windowWidth) throws Exception {
        assertThat(page).as("the report itself runs no script").doesNotContain("<script");
        Path html = work.resolve("checked-" + System.nanoTime() + ".html");
        Files.writeString(html, page.replace("</body>", LAYOUT_CHECK + "</body>"));
        String dom = run(html, "--dump-dom", windowWidth, 3000);
        Matcher m = RESULT.matcher(dom);
        assertThat(m.find()).as("the layout check ran").isTrue();
        JsonNode r = ResultFiles.mapper().readTree(unescape(m.group(1)));
        List<String> figures = new ArrayList<>();
        r.get("figures").forEach(n -> figures.add(n.asText()));
        List<String> problems = new ArrayList<>();
        r.get("problems").forEach(n -> problems.add(n.asText()));
        return new Layout(figures, problems);
    }

    /** The page as Chromium draws it in a window of {@code width} x {@code height}. */
    Path screenshot(Path html, Path png, int width, int height) throws Exception {
        run(html, "--screenshot=" + png.toAbsolutePath(), width, height);
        return png;
    }

    String dom(Path html) throws Exception {
        return run(html, "--dump-dom", 1400, 3000);
    }

    private String run(Path html, String action, int width, int height) throws IOException, InterruptedException {
        Path profile = Files.createTempDirectory(work, "chromium-profile");
        Path out = work.resolve("chromium-" + System.nanoTime() + ".out");
        Process p = new ProcessBuilder(BINARY.toString(), "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
            // A budget of virtual time: the screenshot waits for layout and paint to finish.
            "--disable-sync", "--hide-scrollbars", "--virtual-time-budget=2000", "--user-data-dir=" + profile, action,
            "--window-size=" + width + "," + height, html.toUri().toString())
            .redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish within 90 s");
        }
        assertThat(p.exitValue()).as("chromium exit").isZero();
        return Files.readString(out, StandardCharsets.UTF_8);
    }

    private static String unescape(String html) {
        return html.replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&#39;", "'")
            .replace("&amp;", "&");
    }
}
