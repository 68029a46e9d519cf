package io.lossprobe.analysis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A check as JUnit XML (one test case per limit, a failure per broken one), so CI servers that read JUnit
 * reports show which transport, level and metric failed.
 */
public final class JUnitXml {
    private JUnitXml() {
    }

    public static String render(CheckReport report) {
        StringBuilder sb = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        sb.append("<testsuite name=\"lossprobe check\" tests=\"").append(report.evaluations().size())
            .append("\" failures=\"").append(report.failures().size())
            .append("\" errors=\"0\" skipped=\"0\" timestamp=\"")
            .append(Fmt.xml(String.valueOf(report.run().run().startedAt()))).append("\">\n");
        for (CheckReport.Evaluation e : report.evaluations()) {
            sb.append("  <testcase classname=\"lossprobe.").append(Fmt.xml(e.transport())).append('.')
                .append(Fmt.xml(e.level())).append("\" name=\"").append(Fmt.xml(e.metric())).append('"');
            if (e.passed()) {
                sb.append("/>\n");
            } else {
                sb.append(">\n    <failure message=\"").append(Fmt.xml(e.message())).append("\" type=\"threshold\">")
                    .append(Fmt.xml(e.message())).append("</failure>\n  </testcase>\n");
            }
        }
        return sb.append("</testsuite>\n").toString();
    }

    public static void write(Path file, CheckReport report) throws IOException {
        io.lossprobe.core.result.ResultFiles.writeAtomically(file, render(report).getBytes(StandardCharsets.UTF_8));
    }
}
