package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SummaryTableTest {
    @TempDir
    Path dir;

    @Test
    void nicColumnsComeFromTheBusiestInterfaceOverTheWindow() {
        LoadedResult r = Fixtures.load(dir, "r.json", Fixtures.withStep(0, s -> s.with("hostCounters")
            .put("dev.eth0.rxBytes", 10).put("dev.eth0.txBytes", 10)));
        StepMetrics m = SummaryTable.of(List.of(r)).rows().get(0).m();
        assertThat(m.nicInterface()).isEqualTo("lo");
        long rxBytes = r.run().steps().get(0).hostCounters().get("dev.lo.rxBytes");
        double windowS = r.run().steps().get(0).windowNs() / 1e9;
        assertThat(m.nicInMbps()).isCloseTo(rxBytes * 8 / 1e6 / windowS, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(m.retransmitsPer1k()).isNaN();
    }

    @Test
    void markdownAndCsvHaveTheBenchmarkColumns() {
        SummaryTable t = SummaryTable.of(List.of(Fixtures.load(dir, "r.json", Fixtures.sample())));
        assertThat(t.markdown().lines().findFirst().orElseThrow()).contains("received/s", "mean ms", "p99 ms",
            "CPU %", "NIC in Mb/s", "NIC out Mb/s", "NIC in pkt/s", "NIC out pkt/s", "loss %")
            .doesNotContain("TPS");
        List<String> csv = t.csv().lines().toList();
        assertThat(csv).hasSize(3);
        // Machine-read: the CSV's names and order stay as they were.
        assertThat(csv.get(0)).isEqualTo("started_at,transport,level,achieved_msgs_per_s,mean_delay_ms,p99_delay_ms,"
            + "delay_uncertainty_ms,process_cpu_percent,host_cpu_percent,nic,nic_in_mbit_per_s,nic_out_mbit_per_s,"
            + "nic_in_packets_per_s,nic_out_packets_per_s,loss_percent,kernel_socket_drops,retransmits_per_1k,"
            + "naks_per_1k,warnings,flags");
        assertThat(csv.get(1)).contains(",udp,10k,10000,");
    }

    @Test
    void aStepWithoutDelayShowsADashNotZeroAndAnEmptyCsvCell() {
        SummaryTable t = SummaryTable.of(List.of(Fixtures.load(dir, "r.json",
                Fixtures.withStep(1, Fixtures::noDelay))));
        List<String> md = t.markdown().lines().toList();
        List<String> header = cells(md.get(0));
        int mean = header.indexOf("mean ms");
        int p99 = header.indexOf("p99 ms");
        assertThat(cells(md.get(2)).get(mean)).matches("\\d+\\.\\d{3}"); // udp 10k: delay recorded
        assertThat(cells(md.get(3)).get(mean)).isEqualTo("-");
        assertThat(cells(md.get(3)).get(p99)).isEqualTo("-");

        List<String> csvHeader = List.of(t.csv().lines().toList().get(0).split(",", -1));
        List<String> row = List.of(t.csv().lines().toList().get(2).split(",", -1));
        assertThat(row.get(csvHeader.indexOf("mean_delay_ms"))).isEmpty();
        assertThat(row.get(csvHeader.indexOf("p99_delay_ms"))).isEmpty();

        String html = t.html(false);
        String secondRow = html.substring(html.indexOf("<tr", html.indexOf("<tbody>") + 10));
        assertThat(secondRow).startsWith("<tr><td>udp</td><td>50k</td><td class=\"n\">")
            .contains("<td class=\"n\">-</td><td class=\"n\">-</td>");
    }

    @Test
    void everyFigureOfTheOneTableIsInOneOfTheTwoHtmlTables() {
        SummaryTable t = SummaryTable.of(List.of(Fixtures.load(dir, "r.json", Fixtures.sample())));
        List<String> md = cells(t.markdown().lines().findFirst().orElseThrow());
        String html = t.deliveryHtml(true) + t.speedHtml(true);
        for (String title : md) {
            assertThat(html).as(title).contains("<th>" + Fmt.html(title) + "</th>");
        }
        // The one flags column is split by meaning: the sender's shortfall with delivery, the host's CPU with cost.
        assertThat(t.deliveryHtml(false)).startsWith("<table class=\"summary delivery\">");
        assertThat(t.speedHtml(false)).startsWith("<table class=\"summary speed\">");
        assertThat(t.html(false)).isEqualTo(t.deliveryHtml(false) + t.speedHtml(false));
    }

    @Test
    void theFlagsGoWhereTheyBelong() {
        SummaryTable t = SummaryTable.of(List.of(Fixtures.load(dir, "r.json", Fixtures.withStep(1, s -> {
            ((ObjectNode) s.get("counts")).put("behind", 5_000).put("scheduled", 55_000);
            s.put("saturated", true);
            ((ObjectNode) s.get("cpu")).put("hostPercent", 97.5);
        }))));
        assertThat(t.markdown()).contains("| saturated,host-cpu |");
        assertThat(t.deliveryHtml(false)).contains("<td class=\"n\">55,000</td><td class=\"n\">50,000</td>"
            + "<td class=\"n\">5,000</td>").contains("<td>saturated</td>").doesNotContain("host-cpu");
        assertThat(t.speedHtml(false)).contains("<td class=\"n\">97.5</td>").contains("<td>host-cpu</td>")
            .doesNotContain("saturated");
    }

    /** The cells of a Markdown table row, trimmed. */
    private static List<String> cells(String row) {
        String inner = row.substring(1, row.length() - 1);
        return java.util.Arrays.stream(inner.split("\\|", -1)).map(String::trim).toList();
    }

    @Test
    void tcpFallsBackToHostRetransmitCounterAndMissingKeysAreTolerated() {
        LoadedResult r = Fixtures.load(dir, "t.json", Fixtures.withStep(0, s -> {
            s.put("transport", "tcp");
            s.with("hostCounters").put("Tcp.RetransSegs", 20);
        }));
        StepMetrics m = StepMetrics.of(r.run(), r.run().steps().get(0));
        assertThat(m.retransmitsPer1k()).isEqualTo(2.0);
        assertThat(m.naksPer1k()).isNaN();
    }
}
