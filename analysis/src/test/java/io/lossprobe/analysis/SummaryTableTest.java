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
    void tcpFallsBackToHostRetransmitCounterAndMissingKeysAreTolerated() {
        LoadedResult r = Fixtures.load(dir, "t.json", Fixtures.withStep(0, s -> {
            s.put("transport", "tcp");
            s.with("hostCounters").put("Tcp.RetransSegs", 20);
        }));
        StepMetrics m = StepMetrics.of(r.run().steps().get(0));
        assertThat(m.retransmitsPer1k()).isEqualTo(2.0);
        assertThat(m.naksPer1k()).isNaN();
    }
}
