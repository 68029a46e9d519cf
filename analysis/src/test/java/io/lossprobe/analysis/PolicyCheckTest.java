package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyCheckTest {
    @TempDir
    Path dir;

    private Policy policy(String json) throws IOException, InputException {
        Path file = dir.resolve("policy.json");
        Files.writeString(file, json);
        return Policy.read(file);
    }

    private static List<String> failures(CheckReport r) {
        return r.failures().stream().map(e -> e.transport() + " " + e.level() + " " + e.metric()).toList();
    }

    @Test
    void cleanRunPassesEveryLimit() throws Exception {
        Policy p = policy("{\"defaults\":{\"maxLossPercent\":0.1,\"minAchievedPercentOfTarget\":99,"
            + "\"maxP99DelayMs\":1000,\"maxRetransmitsPer1k\":1}}");
        CheckReport r = new PolicyCheck(p).check(Fixtures.load(dir, "r.json", Fixtures.sample()), Optional.empty());
        assertThat(r.passed()).isTrue();
        assertThat(r.evaluations()).extracting(CheckReport.Evaluation::metric)
            .contains("maxLossPercent", "minAchievedPercentOfTarget", "maxP99DelayMs");
    }

    @Test
    void eachThresholdNamesTransportLevelAndMetric() throws Exception {
        Policy p = policy("{\"defaults\":{\"maxLossPercent\":0.1,\"minAchievedRate\":5000,"
            + "\"minAchievedPercentOfTarget\":99,\"maxP99DelayMs\":1000,\"maxRetransmitsPer1k\":1,"
            + "\"maxNaksPer1k\":1}}");
        PolicyCheck check = new PolicyCheck(p);
        assertThat(failures(check.check(Fixtures.load(dir, "loss.json",
            Fixtures.withStep(1, s -> Fixtures.lose(s, 500))), Optional.empty())))
            .containsExactly("udp 50k maxLossPercent");
        assertThat(failures(check.check(Fixtures.load(dir, "slow.json",
            Fixtures.withStep(0, s -> s.put("achievedReceiveRate", 4000.0))), Optional.empty())))
            .containsExactly("udp 10k minAchievedRate", "udp 10k minAchievedPercentOfTarget");
        assertThat(failures(check.check(Fixtures.load(dir, "p99.json",
            Fixtures.withStep(1, s -> s.with("delay").put("p99Ns", 2_000_000_000L))), Optional.empty())))
            .containsExactly("udp 50k maxP99DelayMs");
        assertThat(failures(check.check(Fixtures.load(dir, "re.json",
            Fixtures.withStep(0, s -> s.with("transportCounters").put("retransmitsSent", 100))),
            Optional.empty()))).containsExactly("udp 10k maxRetransmitsPer1k");
        assertThat(failures(check.check(Fixtures.load(dir, "nak.json",
            Fixtures.withStep(0, s -> s.with("transportCounters").put("rcv-naks-sent", 100))),
            Optional.empty()))).containsExactly("udp 10k maxNaksPer1k");
    }

    @Test
    void levelOverridesTransportOverridesDefaults() throws Exception {
        Policy p = policy("{\"defaults\":{\"maxLossPercent\":0},"
            + "\"transports\":{\"udp\":{\"maxLossPercent\":5,\"levels\":{\"50000\":{\"maxLossPercent\":0.5}}}}}");
        assertThat(p.thresholdsFor("udp", "10k").maxLossPercent()).isEqualTo(5.0);
        assertThat(p.thresholdsFor("udp", "50k").maxLossPercent()).isEqualTo(0.5);
        assertThat(p.thresholdsFor("tcp", "50k").maxLossPercent()).isEqualTo(0.0);
    }

    @Test
    void regressionAgainstBaselineBeyondTolerance() throws Exception {
        Policy p = policy("{\"baseline\":{\"maxP99IncreasePercent\":20,\"maxLossIncreasePoints\":0.01}}");
        LoadedResult base = Fixtures.load(dir, "base.json", Fixtures.sample());
        LoadedResult worse = Fixtures.load(dir, "worse.json", Fixtures.withStep(1, s -> {
            s.with("delay").put("p99Ns", s.get("delay").get("p99Ns").asLong() * 2);
            Fixtures.lose(s, 100);
        }));
        CheckReport r = new PolicyCheck(p).check(worse, Optional.of(base));
        assertThat(failures(r)).containsExactly("udp 50k baseline.lossPercent", "udp 50k baseline.p99DelayMs");
        assertThat(new PolicyCheck(p).check(base, Optional.of(base)).passed()).isTrue();
    }

    @Test
    void interruptedRunFailsWhenCompletenessIsRequired() throws Exception {
        Policy p = policy("{}");
        var root = Fixtures.sample();
        root.put("status", "interrupted");
        assertThat(failures(new PolicyCheck(p).check(Fixtures.load(dir, "i.json", root), Optional.empty())))
            .containsExactly("* * status");
    }

    @Test
    void unknownKeyIsRefusedWithItsPlace() throws IOException {
        Path file = dir.resolve("typo.json");
        Files.writeString(file, "{\"transports\":{\"udp\":{\"maxLoss\":1}}}");
        assertThatThrownBy(() -> Policy.read(file)).isInstanceOf(InputException.class)
            .hasMessageContaining("unknown key 'maxLoss'").hasMessageContaining("transports.udp")
            .hasMessageContaining("maxLossPercent").hasMessageNotContaining("\n");
    }

    @Test
    void badLevelAndMalformedPolicyAreOneLine() throws IOException {
        Path level = dir.resolve("level.json");
        Files.writeString(level, "{\"transports\":{\"udp\":{\"levels\":{\"fast\":{}}}}}");
        assertThatThrownBy(() -> Policy.read(level)).isInstanceOf(InputException.class)
            .hasMessageContaining("fast").hasMessageNotContaining("\n");
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{\"defaults\": {");
        assertThatThrownBy(() -> Policy.read(bad)).isInstanceOf(InputException.class)
            .hasMessageContaining("not valid JSON").hasMessageNotContaining("\n");
    }
}
