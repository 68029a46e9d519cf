package io.lossprobe.core.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.lossprobe.core.result.ResultFiles;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SendPatternTest {
    private static final long S = 1_000_000_000L;
    private static final ObjectMapper JSON = ResultFiles.mapper();

    private static Plan plan(int ports, String... levels) {
        return new Plan(List.of("udp"), ports, 40000, java.util.Arrays.stream(levels).map(Level::parse).toList(), S,
            0, S, 64, "127.0.0.1");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "constant|constant", "CONSTANT|constant", "poisson|poisson", "burst:64|burst:64",
        "burst:64/10ms|burst:64/10ms", "burst:8/0.5s|burst:8/500ms", "onoff:100ms/100ms|onoff:100ms/100ms",
        "onoff:1s/0|onoff:1s/0", "onoff:1500us/2.5ms|onoff:1500us/2500us"})
    void patternsReadAndWriteTheirCanonicalText(String text, String canonical) {
        SendPattern p = SendPattern.parse(text);
        assertThat(p).hasToString(canonical);
        assertThat(SendPattern.parse(canonical)).isEqualTo(p);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "steady|--pattern: unknown pattern 'steady'; give constant, burst:N, burst:N/INTERVAL, poisson or onoff:ON/OFF",
        "burst:|--pattern burst:: the burst size '' is not a whole number (burst:N or burst:N/INTERVAL, e.g. "
            + "burst:64/10ms)",
        "burst:0|--pattern burst:0: the burst size must be between 1 and 1000000000",
        "burst:8/0|--pattern burst:8/0: the burst interval must be above 0 and at most 24h",
        "burst:8/soon|--pattern burst:8/soon: the burst interval 'soon' is not a duration (100ms, 1s)",
        "onoff:100ms|--pattern onoff:100ms: give onoff:ON/OFF, e.g. onoff:100ms/100ms",
        "onoff:0/1s|--pattern onoff:0/1s: ON must be above 0 and at most 24h",
        "onoff:1s/25h|--pattern onoff:1s/25h: OFF must be at most 24h",
    })
    void aBadPatternIsOneLine(String text, String message) {
        assertThatThrownBy(() -> SendPattern.parse(text)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage(message);
    }

    @Test
    void aBurstWithAnIntervalMustBeEveryFlowsRate() {
        // 4 ports at 25.6k: 6,400/s per flow, exactly 64 per 10 ms.
        assertThat(plan(4, "25.6k").withPattern("burst:64/10ms", 0).pattern()).isEqualTo("burst:64/10ms");
        assertThat(plan(4, "51.2k").withPattern("burst:128/10ms", 0).pattern()).isEqualTo("burst:128/10ms");
        // An interval fixes the rate: a second level cannot keep it.
        assertThatThrownBy(() -> plan(4, "25.6k", "51.2k").withPattern("burst:64/10ms", 0))
            .hasMessageContaining("sends 12800/s").hasMessageEndingWith("(level 51.2k over 4 ports)");
        assertThatThrownBy(() -> plan(4, "25.6k", "30k").withPattern("burst:64/10ms", 0))
            .hasMessage("--pattern burst:64/10ms is 64 messages per 10ms per flow, but a flow of this run sends "
                + "7500/s; give a level that makes 64 per 10ms per flow, or burst:64 (the level sets the rate) "
                + "(level 30k over 4 ports)");
        // 25,601 over 4 ports: flow 0 sends 6,401/s, the others 6,400.
        assertThatThrownBy(() -> plan(4, "25601").withPattern("burst:64/10ms", 0))
            .hasMessageContaining("sends 6401/s");
        assertThatThrownBy(() -> plan(4, "max").withPattern("burst:64/10ms", 0))
            .hasMessage("--pattern burst:64/10ms has a rate of its own; the level 'max' has none (use burst:64) "
                + "(level max over 4 ports)");
        // Without an interval the level sets the rate: any level, even max.
        assertThat(plan(4, "30k", "max").withPattern("burst:64", 0).sendPattern().burst()).isEqualTo(64);
    }

    @Test
    void thePatternAndSeedSurviveJsonAndAnOlderPlanIsConstant() throws Exception {
        Plan plan = plan(4, "1k").withPattern("poisson", -77);
        Plan back = JSON.readValue(JSON.writeValueAsString(plan), Plan.class);
        assertThat(back).isEqualTo(plan);
        assertThat(back.pattern()).isEqualTo("poisson");
        assertThat(back.seed()).isEqualTo(-77);
        assertThat(JSON.writeValueAsString(plan)).contains("\"pattern\" : \"poisson\"").doesNotContain("sendPattern");
        String old = """
            {"transports":["udp"],"ports":4,"basePort":40000,"levels":["1k"],"durationNs":1000000000,
             "warmupNs":0,"drainNs":1000000000,"messageSize":64,"bindAddress":"127.0.0.1"}""";
        Plan read = JSON.readValue(old, Plan.class);
        assertThat(read.pattern()).isEqualTo("constant");
        assertThat(read.sendPattern().isConstant()).isTrue();
        assertThat(read.seed()).isZero();
        // The with-ers keep the pattern.
        assertThat(plan.withBindAddress("::1").withWarmup(0).forSize(64).withDscp(List.of(46)).pattern())
            .isEqualTo("poisson");
        assertThat(plan.withTransportOptions(java.util.Map.of("a", "b")).seed()).isEqualTo(-77);
    }
}
