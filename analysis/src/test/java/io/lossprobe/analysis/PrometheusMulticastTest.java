package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.result.ResultFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A multicast run's textfile (sample-multicast.json, a real lab run: 198.18.0.102 lost 178 of 20,000): the step's
 * series are the worst receiver's as before, and each receiver has its own {@code lossprobe_last_run_receiver_...}
 * series with a {@code receiver} label; promtool parses it.
 */
class PrometheusMulticastTest {
    @TempDir
    Path dir;

    private String at(LoadedResult run) {
        return "direction=\"forward\",mode=\"stream\",name=\"" + PrometheusTextfile.defaultName(run.run())
            + "\",offered_rate=\"20000\",";
    }

    @Test
    void eachReceiverHasItsOwnSeriesAndTheStepKeepsTheWorstReceivers() throws Exception {
        LoadedResult run = ReceiverMatrixTest.sample();
        Path prom = dir.resolve("m.prom");
        PrometheusTextfile.write(prom, run, RunLabels.of(run.run()), Optional.empty());
        String text = Files.readString(prom);
        String at = at(run);
        // The run's target is its group and its receivers, not the plan's bind address (127.0.0.1 in the file).
        String tail = ",size_bytes=\"64\",target=\"239.255.0.1->198.18.0.101,198.18.0.102,198.18.0.103\","
            + "transport=\"udp\"}";
        assertThat(text).contains("lossprobe_last_run_lost_messages{" + at.substring(0, at.length() - 1) + tail
                + " 178.0")
            .contains("lossprobe_last_run_receiver_lost_messages{" + at + "receiver=\"198.18.0.102\"" + tail
                + " 178.0")
            .contains("lossprobe_last_run_receiver_lost_messages{" + at + "receiver=\"198.18.0.101\"" + tail
                + " 0.0")
            .contains("lossprobe_last_run_receiver_loss_ratio{" + at + "receiver=\"198.18.0.102\"" + tail
                + " 0.0089")
            .contains("lossprobe_last_run_receiver_received_messages{" + at + "receiver=\"198.18.0.103\"" + tail
                + " 20000.0")
            .contains("lossprobe_last_run_receiver_worst{" + at + "receiver=\"198.18.0.102\"" + tail + " 1.0")
            .contains("lossprobe_last_run_receiver_worst{" + at + "receiver=\"198.18.0.101\"" + tail + " 0.0")
            .contains("lossprobe_last_run_receiver_delay_seconds{" + at + "receiver=\"198.18.0.101\"" + tail
                .replace("}", ",quantile=\"0.99\"}"))
            // The step's series have no receiver label: an alert on them fires once per step, as for unicast.
            .doesNotContainPattern("lossprobe_last_run_(lost_messages|loss_ratio)\\{[^}]*receiver=");
        assumeTrue(Files.isExecutable(PrometheusTextfileTest.PROMTOOL), "promtool not installed");
        assertThat(PrometheusTextfileTest.promtool(prom)).isEqualTo("exit 0: ");
    }

    @Test
    void aReceiverNameFromTheFileIsEscapedAsTheFormatSays() throws Exception {
        ObjectNode root = (ObjectNode) ResultFiles.mapper().readTree(
            Path.of(getClass().getResource("/sample-multicast.json").toURI()).toFile());
        ((ObjectNode) root.withArray("steps").get(0).withArray("receivers").get(0))
            .put("receiver", "evil\"} 1\nlossprobe_x{a=\"\\");
        Path file = Files.write(dir.resolve("evil.json"), ResultFiles.mapper().writeValueAsBytes(root));
        LoadedResult run = LoadedResult.read(file);
        Path prom = dir.resolve("evil.prom");
        PrometheusTextfile.write(prom, run, RunLabels.of(run.run()), Optional.empty());
        assertThat(Files.readString(prom)).contains("receiver=\"evil\\\"} 1\\nlossprobe_x{a=\\\"\\\\\"")
            .doesNotContain("\nlossprobe_x{");
        assumeTrue(Files.isExecutable(PrometheusTextfileTest.PROMTOOL), "promtool not installed");
        assertThat(PrometheusTextfileTest.promtool(prom)).isEqualTo("exit 0: ");
    }
}
