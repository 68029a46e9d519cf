package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

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
        assertThat(t.markdown().lines().findFirst().orElseThrow()).contains("achieved TPS", "mean ms", "p99 ms",
            "CPU %", "NIC in Mb/s", "NIC out Mb/s", "NIC in pkt/s", "NIC out pkt/s", "loss %");
        List<String> csv = t.csv().lines().toList();
        assertThat(csv).hasSize(3);
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
