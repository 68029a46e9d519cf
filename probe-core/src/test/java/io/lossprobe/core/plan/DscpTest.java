package io.lossprobe.core.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DscpTest {
    @ParameterizedTest(name = "{0} = {1}")
    @CsvSource({"EF,46", "ef,46", "CS0,0", "cs1,8", "CS7,56", "AF11,10", "AF12,12", "AF13,14", "AF21,18", "AF31,26",
        "AF41,34", "AF43,38", "0,0", "63,63", " 46 ,46"})
    void namesAndNumbersAreTheRfcValues(String text, int dscp) {
        assertThat(Dscp.parse(text)).isEqualTo(dscp);
        assertThat(Dscp.parse(Dscp.name(dscp))).as("the name of %d reads back", dscp).isEqualTo(dscp);
    }

    @Test
    void everyDscpHasANameThatReadsBack() {
        for (int d = 0; d <= Dscp.MAX; d++) {
            assertThat(Dscp.parse(Dscp.name(d))).isEqualTo(d);
            assertThat(Dscp.ofTos(Dscp.tos(d) | 0b11)).as("the ECN bits are not the class").isEqualTo(d);
        }
        assertThat(Dscp.name(46)).isEqualTo("EF");
        assertThat(Dscp.name(8)).isEqualTo("CS1");
        assertThat(Dscp.name(22)).isEqualTo("AF23");
        assertThat(Dscp.name(1)).isEqualTo("1");
        assertThat(Dscp.names((1L << 46) | 1L)).isEqualTo("CS0, EF");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
        "CS8|--dscp: unknown class 'CS8'; give EF, AF11-AF43, CS0-CS7 or 0-63",
        "AF44|unknown class 'AF44'",
        "AF51|unknown class 'AF51'",
        "64|--dscp 64 is above 63 (a DSCP is 6 bits)",
        "-1|unknown class '-1'",
        "1000|above 63",
        "EF,,CS1|--dscp has an empty class",
        "''|--dscp is empty",
    })
    void badInputIsOneLine(String text, String message) {
        assertThatThrownBy(() -> Dscp.parseList(text)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining(message).message().doesNotContain("\n");
    }

    @Test
    void aListSpreadsOverTheFlows() {
        Plan plan = new Plan(List.of("udp"), 5, 40000, List.of(Level.parse("10k")), 1_000_000_000L, 0, 0, 64,
            "127.0.0.1").withDscp(Dscp.parseList("EF,CS1"));
        assertThat(plan.dscp()).containsExactly(46, 8);
        assertThat(List.of(plan.dscpOf(0), plan.dscpOf(1), plan.dscpOf(2), plan.dscpOf(3), plan.dscpOf(4)))
            .containsExactly(46, 8, 46, 8, 46);
        assertThat(plan.tosOf(0)).isEqualTo(0xb8);
        assertThat(plan.forSize(64).withWarmup(5).dscp()).as("kept through every copy").containsExactly(46, 8);
        Plan none = plan.withDscp(null);
        assertThat(none.dscpOf(3)).isEqualTo(-1);
        assertThat(none.tosOf(3)).isEqualTo(-1);
        assertThatThrownBy(() -> plan.withDscp(List.of(64))).hasMessage("--dscp 64 is not a DSCP (0 to 63)");
    }
}
