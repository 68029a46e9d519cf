package io.lossprobe.core.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.lossprobe.core.result.ResultFiles;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PlanTest {
    private static final long S = 1_000_000_000L;
    private static final ObjectMapper JSON = ResultFiles.mapper();

    private static Plan withOptions(Map<String, String> options) {
        return new Plan(List.of("udp"), 4, 40000, List.of(Level.parse("1k")), S, 0, S, 64, "127.0.0.1",
            Plan.STREAM, 0, options);
    }

    @Test
    void transportOptionsAreKeptSortedAndSurviveJson() throws Exception {
        Map<String, String> given = new HashMap<>(Map.of("udp.io", "auto", "rcvbuf", "1048576",
            "aeron.reliable", "false"));
        Plan plan = withOptions(given);
        given.put("tcp.nodelay", "false"); // a later change to the caller's map does not reach the plan
        assertThat(plan.transportOptions()).containsExactly(Map.entry("aeron.reliable", "false"),
            Map.entry("rcvbuf", "1048576"), Map.entry("udp.io", "auto"));
        assertThatThrownBy(() -> plan.transportOptions().put("x", "y"))
            .isInstanceOf(UnsupportedOperationException.class);
        Plan back = JSON.readValue(JSON.writeValueAsString(plan), Plan.class);
        assertThat(back).isEqualTo(plan);
        assertThat(back.withBindAddress("10.0.0.1").transportOptions()).isEqualTo(plan.transportOptions());
    }

    @Test
    void theOlderConstructorsAndOldJsonRecordNoOptions() throws Exception {
        Plan stream = new Plan(List.of("udp"), 4, 40000, List.of(Level.parse("1k")), S, 0, S, 64, "127.0.0.1");
        Plan echo = new Plan(List.of("udp"), 4, 40000, List.of(Level.parse("1k")), S, 0, S, 64, "127.0.0.1",
            Plan.ECHO, 2);
        assertThat(stream.transportOptions()).isEmpty();
        assertThat(echo.transportOptions()).isEmpty();
        String old = """
            {"transports":["udp"],"ports":4,"basePort":40000,"levels":["1k"],"durationNs":1000000000,
             "warmupNs":0,"drainNs":1000000000,"messageSize":64,"bindAddress":"127.0.0.1"}""";
        Plan read = JSON.readValue(old, Plan.class);
        assertThat(read).isEqualTo(stream);
        assertThat(read.transportOptions()).isEmpty();
    }

    @Test
    void anOptionWithoutAValueIsRefused() {
        Map<String, String> options = new HashMap<>();
        options.put("udp.io", null);
        assertThatThrownBy(() -> withOptions(options)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("transport option 'udp.io' has no value");
    }

    @Test
    void atMostAsManyLevelsAsTheHeadersStepFieldCanNumber() {
        assertThat(Plan.MAX_LEVELS).isEqualTo(1 << 16);
        long wordForLastStep = io.lossprobe.core.wire.MessageHeader.word1(1, Plan.MAX_LEVELS - 1, 64);
        assertThat(io.lossprobe.core.wire.MessageHeader.step(wordForLastStep)).isEqualTo(Plan.MAX_LEVELS - 1);
        Plan most = levels(Plan.MAX_LEVELS);
        assertThat(most.levels()).hasSize(65_536);
        assertThatThrownBy(() -> levels(Plan.MAX_LEVELS + 1)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("--levels has 65537 levels; at most 65536 fit the message header's 16-bit step number");
    }

    private static Plan levels(int count) {
        return new Plan(List.of("udp"), 4, 40000, java.util.Collections.nCopies(count, Level.parse("1k")), S, 0, S,
            64, "127.0.0.1");
    }
}
