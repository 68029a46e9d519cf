package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.result.ResultFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The report's receiver-by-flow matrix over a real multicast run in the lab (sample-multicast.json: UDP, 4 flows at
 * 20k/s, three receivers, 1 % of the group dropped on 198.18.0.102's link, which lost 40, 65, 37 and 36).
 */
class ReceiverMatrixTest {
    @TempDir
    Path dir;

    static LoadedResult sample() throws Exception {
        return LoadedResult.read(Path.of(ReceiverMatrixTest.class.getResource("/sample-multicast.json").toURI()));
    }

    @Test
    void theHtmlReportHasARowPerReceiverAColumnPerFlowAndBothTotals() throws Exception {
        String page = HtmlReport.render(List.of(sample()), m -> { });
        assertThat(page).contains("<title>lossprobe report: multicast 239.255.0.1-&gt;198.18.0.101, 198.18.0.102, "
            + "198.18.0.103</title>").contains("multicast from this host to <b>239.255.0.1-&gt;198.18.0.101,"
            + "198.18.0.102,198.18.0.103</b>").doesNotContain("127.0.0.1");
        int at = page.indexOf("<h2 id=\"receivers\">Receivers by flow</h2>");
        assertThat(at).isGreaterThan(page.indexOf("id=\"summary\"")).isLessThan(page.indexOf("id=\"delay\""));
        String table = page.substring(page.indexOf("<table class=\"summary receivers\" id=\"receivers-0\">"));
        table = table.substring(0, table.indexOf("</table>"));
        assertThat(table).contains("<th>receiver \\ flow</th><th>flow 0 (port 46100)</th>"
                + "<th>flow 1 (port 46101)</th><th>flow 2 (port 46102)</th><th>flow 3 (port 46103)</th>"
                + "<th>all flows</th>")
            .contains("<tr><th>198.18.0.101</th><td class=\"n\">0 / 0.000%</td><td class=\"n\">0 / 0.000%</td>")
            // The worst receiver: marked, red (lossy), its flows' own losses and its total, the step's figures.
            .contains("<tr class=\"lossy\"><th><b>198.18.0.102 (worst)</b></th><td class=\"n\">40 / 0.800%</td>"
                + "<td class=\"n\">65 / 1.300%</td><td class=\"n\">37 / 0.740%</td><td class=\"n\">36 / 0.720%</td>"
                + "<td class=\"n\">178 / 0.890%</td></tr>")
            .contains("<tr><th>198.18.0.103</th>")
            // Each flow over the three receivers (15,000 sent), and everything (60,000).
            .contains("<tr><th>all receivers</th><td class=\"n\">40 / 0.267%</td><td class=\"n\">65 / 0.433%</td>"
                + "<td class=\"n\">37 / 0.247%</td><td class=\"n\">36 / 0.240%</td><td class=\"n\">178 / 0.297%</td>"
                + "</tr>");
        assertThat(page).contains("<h3>udp 20k: 3 receivers, 4 flows</h3>");
    }

    @Test
    void theMarkdownReportHasTheSameMatrixAfterTheSummary() throws Exception {
        String md = ReceiverMatrix.reportMarkdown(List.of(sample()));
        assertThat(md).startsWith(SummaryTable.of(List.of(sample())).markdown())
            .contains("\n## udp 20k: 3 receivers, 4 flows: lost / loss % per receiver and flow\n\n"
                + "| receiver \\ flow | flow 0 (port 46100) | flow 1 (port 46101) | flow 2 (port 46102) "
                + "| flow 3 (port 46103) | all flows |\n|---|---:|---:|---:|---:|---:|\n"
                + "| 198.18.0.101 | 0 / 0.000% | 0 / 0.000% | 0 / 0.000% | 0 / 0.000% | 0 / 0.000% |\n"
                + "| 198.18.0.102 (worst) | 40 / 0.800% | 65 / 1.300% | 37 / 0.740% | 36 / 0.720% | 178 / 0.890% |\n"
                + "| 198.18.0.103 | 0 / 0.000% | 0 / 0.000% | 0 / 0.000% | 0 / 0.000% | 0 / 0.000% |\n"
                + "| all receivers | 40 / 0.267% | 65 / 0.433% | 37 / 0.247% | 36 / 0.240% | 178 / 0.297% |\n");
    }

    /**
     * The sample with the union its receivers imply (only 198.18.0.102 lost, so nothing was lost at every receiver
     * and its losses are the losses at some only), one flow's union unknown: two more rows, per flow and in all.
     */
    @Test
    void theUnionRowsSplitLossAtEveryReceiverFromLossAtSome() throws Exception {
        io.lossprobe.core.result.StepResult step = sample().run().steps().get(0);
        io.lossprobe.core.result.ReceiverResult worst = step.receivers().get(1);
        List<io.lossprobe.core.result.ReceiverUnion.Flow> flows = new java.util.ArrayList<>();
        for (io.lossprobe.core.result.FlowResult f : worst.flows()) {
            flows.add(io.lossprobe.core.result.ReceiverUnion.Flow.of(f.flow(), f.port(), f.counts().sent(),
                f.counts().lost(), 0));
        }
        io.lossprobe.core.result.ReceiverUnion union = io.lossprobe.core.result.ReceiverUnion.of(3, flows);
        ObjectNode root = (ObjectNode) ResultFiles.mapper().readTree(
            Path.of(getClass().getResource("/sample-multicast.json").toURI()).toFile());
        ((ObjectNode) root.withArray("steps").get(0)).set("union", ResultFiles.mapper().valueToTree(union));
        LoadedResult run = LoadedResult.read(Files.write(dir.resolve("union.json"),
            ResultFiles.mapper().writeValueAsBytes(root)));
        long sent = worst.counts().sent();
        String md = ReceiverMatrix.markdown(List.of(run));
        assertThat(md).contains("| lost at every receiver | 0 / 0.000% | 0 / 0.000% | 0 / 0.000% | 0 / 0.000% "
            + "| 0 / 0.000% |\n")
            .contains("| lost at some receivers only | " + ReceiverMatrix.cell(worst.flows().get(0).counts().lost(),
                worst.flows().get(0).counts().sent()) + " |")
            .contains(ReceiverMatrix.cell(worst.counts().lost(), sent) + " |\n");
        String page = HtmlReport.render(List.of(run), m -> { });
        assertThat(page).contains("<tr><th>lost at some receivers only</th><td class=\"n\">"
            + ReceiverMatrix.cell(worst.flows().get(0).counts().lost(), worst.flows().get(0).counts().sent()));
        flows.set(2, io.lossprobe.core.result.ReceiverUnion.Flow.unknown(2, flows.get(2).port(), flows.get(2).sent(),
            "198.18.0.102 lost in more than 4096 ranges, more than it keeps"));
        ((ObjectNode) root.withArray("steps").get(0)).set("union", ResultFiles.mapper().valueToTree(
            io.lossprobe.core.result.ReceiverUnion.of(3, flows)));
        LoadedResult partly = LoadedResult.read(Files.write(dir.resolve("partly.json"),
            ResultFiles.mapper().writeValueAsBytes(root)));
        assertThat(ReceiverMatrix.markdown(List.of(partly))).contains("| lost at every receiver | 0 / 0.000% "
            + "| 0 / 0.000% | unknown | 0 / 0.000% | unknown |\n");
    }

    @Test
    void aUnicastReportHasNoMatrix() {
        LoadedResult unicast = Fixtures.load(dir, "r.json", Fixtures.withStep(1, s -> Fixtures.lose(s, 600)));
        assertThat(HtmlReport.render(List.of(unicast), m -> { })).doesNotContain("Receivers by flow")
            .doesNotContain("receivers-0");
        assertThat(ReceiverMatrix.reportMarkdown(List.of(unicast)))
            .isEqualTo(SummaryTable.of(List.of(unicast)).markdown());
    }

    @Test
    void aReceiverNameFromTheFileIsTextInHtmlAndInMarkdown() throws Exception {
        ObjectNode root = (ObjectNode) ResultFiles.mapper().readTree(
            Path.of(getClass().getResource("/sample-multicast.json").toURI()).toFile());
        ObjectNode step = (ObjectNode) root.withArray("steps").get(0);
        String evil = HostileResultTest.PAYLOADS.get(0) + "|x\n| row";
        ((ObjectNode) step.withArray("receivers").get(1)).put("receiver", evil);
        step.put("worstReceiver", evil);
        LoadedResult run = LoadedResult.read(Files.write(dir.resolve("evil.json"),
            ResultFiles.mapper().writeValueAsBytes(root)));
        assertThat(HtmlReport.render(List.of(run), m -> { })).doesNotContain("<script>")
            .contains("<th><b>&lt;script&gt;alert(1)&lt;/script&gt;|x\n| row (worst)</b></th>");
        assertThat(ReceiverMatrix.markdown(List.of(run)))
            .contains("| &lt;script&gt;alert(1)&lt;/script&gt;\\|x \\| row (worst) | 40 / 0.800% |");
    }
}
