package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ComparisonTest {
    @TempDir
    Path dir;

    @Test
    void flagsLossUpAchievedDownAndP99UpBeyondTolerance() {
        LoadedResult a = Fixtures.load(dir, "a.json", Fixtures.sample());
        LoadedResult b = Fixtures.load(dir, "b.json", Fixtures.withStep(1, s -> {
            Fixtures.lose(s, 1000);
            s.put("achievedReceiveRate", 40000.0);
            s.with("delay").put("p99Ns", s.get("delay").get("p99Ns").asLong() * 3);
        }));
        Comparison c = Comparison.of(a, b, Comparison.Tolerance.DEFAULT);
        assertThat(c.rows()).hasSize(2);
        assertThat(c.rows().get(0).regressed()).isFalse();
        assertThat(c.rows().get(1).regressions()).extracting(Comparison.Regression::metric)
            .containsExactly("lossPercent", "achievedRate", "p99DelayMs");
        assertThat(new ComparisonReport(a, b, Comparison.Tolerance.DEFAULT).text()).contains("REGRESSION")
            .contains("udp").contains("50k");
    }

    @Test
    void smallChangesWithinToleranceAreNotRegressions() {
        LoadedResult a = Fixtures.load(dir, "a.json", Fixtures.sample());
        LoadedResult b = Fixtures.load(dir, "b.json", Fixtures.withStep(1, s -> s.put("achievedReceiveRate",
            49000.0)));
        assertThat(Comparison.of(a, b, Comparison.Tolerance.DEFAULT).anyRegression()).isFalse();
    }

    @Test
    void aStepWithoutDelayShowsADashForItsP99() {
        LoadedResult a = Fixtures.load(dir, "a.json", Fixtures.sample());
        LoadedResult b = Fixtures.load(dir, "b.json", Fixtures.withStep(1, Fixtures::noDelay));
        String row50k = new ComparisonReport(a, b, Comparison.Tolerance.DEFAULT).text().lines()
            .filter(l -> l.contains("50k")).findFirst().orElseThrow();
        String[] f = row50k.trim().split("\\s+");
        // proto level loss%A loss%B delta achA achB delta% p99A p99B delta% verdict
        assertThat(f[8]).matches("\\d+\\.\\d{3}");
        assertThat(f[9]).isEqualTo("-");
    }

    @Test
    void textReachesNoControlCharacterToTheTerminal() {
        LoadedResult a = Fixtures.load(dir, "a.json", Fixtures.sample());
        LoadedResult b = Fixtures.load(dir, "b.json", Fixtures.withStep(1, s -> s.put("transport",
            "udp\u001b[2J\u001b[31m")));
        String text = new ComparisonReport(a, b, Comparison.Tolerance.DEFAULT).text();
        assertThat(text).doesNotContain("\u001b").contains("udp?[");
        assertThat(text.lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(100));
    }
}
