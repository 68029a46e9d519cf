package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Retransmits and NAKs are found by the categories the file declares, by name only in files that declare none. */
class StepMetricsTest {
    /**
     * An Aeron echo step as the embedded run reports it: the shared driver's system counter {@code naksSent}
     * already holds the reply NAKs that {@code replyNaksSent} counts again.
     */
    private static ObjectNode aeronEchoStep(boolean declared) {
        ObjectNode root = Fixtures.withStep(0, s -> {
            s.put("transport", "aeron");
            s.putObject("transportCounters").put("aeron.naksSent", 10).put("aeron.rcvNaksSent", 6)
                .put("aeron.replyNaksSent", 4).put("aeron.retransmitsSent", 7).put("aeron.retransmittedBytes", 900)
                .put("aeron.resendsByHand", 5);
        });
        if (declared) {
            var list = root.putObject("counters").putArray("aeron");
            declare(list.addObject(), "aeron.naksSent", "other");
            declare(list.addObject(), "aeron.rcvNaksSent", "nak");
            declare(list.addObject(), "aeron.replyNaksSent", "nak");
            declare(list.addObject(), "aeron.retransmitsSent", "retransmit");
            declare(list.addObject(), "aeron.retransmittedBytes", "traffic");
            declare(list.addObject(), "aeron.resendsByHand", "retransmit");
        }
        return root;
    }

    private static void declare(ObjectNode d, String key, String category) {
        d.put("key", key).put("kind", "counter").put("category", category).put("unit", "n").put("description", "");
    }

    @Test
    void declaredCategoriesCountEachNakOnceAndFindRetransmitsWhateverTheirName(@TempDir Path dir) {
        LoadedResult r = Fixtures.load(dir, "declared.json", aeronEchoStep(true));
        StepMetrics m = StepMetrics.all(r.run()).get(0);
        assertThat(m.naks()).isEqualTo(10.0); // request NAKs 6 + reply NAKs 4, the driver-wide 10 not added again
        assertThat(m.retransmits()).isEqualTo(12.0); // 7 + 5; the byte count is traffic
    }

    @Test
    void aFileWithoutDeclarationsIsReadByNameAsItsVersionDid(@TempDir Path dir) {
        LoadedResult r = Fixtures.load(dir, "legacy.json", aeronEchoStep(false));
        StepMetrics m = StepMetrics.all(r.run()).get(0);
        assertThat(m.naks()).isEqualTo(20.0); // every "nak...sent" key: the old double count
        assertThat(m.retransmits()).isEqualTo(7.0); // "retrans" keys but not bytes; resendsByHand is not found
    }

    @Test
    void aTransportThatDeclaresNoRepairCountersHasNoneRatherThanZero(@TempDir Path dir) {
        ObjectNode root = Fixtures.sample();
        var list = root.putObject("counters").putArray("udp");
        declare(list.addObject(), "udp.receiverSocketDrops", "drop");
        StepMetrics m = StepMetrics.all(Fixtures.load(dir, "udp.json", root).run()).get(0);
        assertThat(m.retransmits()).isNaN();
        assertThat(m.naks()).isNaN();
    }
}
