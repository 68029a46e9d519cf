package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.transport.CounterDescriptor;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Echo files written before the transports shared one reply vocabulary ({@code echo.repliesSent},
 * {@code echo.repliesDropped}) carry {@code udp.repliesDropped} or {@code aeron.repliesSent} /
 * {@code aeron.repliesDropped} with their own declarations, and read, summarise and render as before.
 */
class OldReplyCountersTest {
    @Test
    void oldReplyKeysStillRead(@TempDir Path dir) {
        ObjectNode root = Fixtures.echo();
        for (var step : root.withArray("steps")) {
            ((ObjectNode) step.get("transportCounters")).put("udp.repliesDropped", 3)
                .put("aeron.repliesSent", 7).put("aeron.repliesDropped", 2);
        }
        var udp = root.putObject("counters").putArray("udp");
        udp.addObject().put("key", "udp.receiverSocketDrops").put("kind", "counter").put("category", "drop")
            .put("unit", "datagrams").put("description", "");
        udp.addObject().put("key", "udp.repliesDropped").put("kind", "counter").put("category", "replyLoss")
            .put("unit", "messages").put("description", "echo mode: replies the responder could not send");

        LoadedResult r = Fixtures.load(dir, "old-echo.json", root);

        assertThat(r.run().counters().get("udp")).extracting(CounterDescriptor::key, CounterDescriptor::category)
            .contains(org.assertj.core.groups.Tuple.tuple("udp.repliesDropped", CounterDescriptor.Category.REPLY_LOSS));
        assertThat(r.run().steps().get(0).transportCounters()).containsEntry("udp.repliesDropped", 3L)
            .containsEntry("aeron.repliesDropped", 2L);
        assertThat(StepMetrics.all(r.run())).hasSize(r.run().steps().size());
        assertThat(SummaryTable.of(List.of(r)).markdown()).isNotEmpty();
        assertThat(HtmlReport.render(List.of(r), Optional.empty(), m -> { })).contains("<svg");
    }
}
