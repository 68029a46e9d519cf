package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A CSV opened in a spreadsheet runs any cell that starts with =, +, -, @ (or a tab or carriage return) as a
 * formula, and a transport name, level or error text in a result or mesh file is anyone's. Such cells are prefixed
 * with a quote; plain numbers, negative ones too, stay numbers; a carriage return is quoted.
 */
class CsvInjectionTest {
    @TempDir
    Path dir;

    @Test
    void formulaCellsAreNeutralisedAndNumbersStayNumbers() {
        assertThat(Fmt.csv("=HYPERLINK(\"http://x\")")).isEqualTo("\"'=HYPERLINK(\"\"http://x\"\")\"");
        assertThat(Fmt.csv("+1+cmd|' /C calc'!A0")).isEqualTo("'+1+cmd|' /C calc'!A0");
        assertThat(Fmt.csv("-2+3")).isEqualTo("'-2+3");
        assertThat(Fmt.csv("@SUM(A1)")).isEqualTo("'@SUM(A1)");
        assertThat(Fmt.csv("\tx")).isEqualTo("'\tx");
        assertThat(Fmt.csv("a\rb")).isEqualTo("\"a\rb\"");
        assertThat(Fmt.csv("\r=1")).isEqualTo("\"'\r=1\"");
        for (String n : List.of("-0.020", "-12", "+3", "1.5e-3", "-1.5E+3", "0", "42.000")) {
            assertThat(Fmt.csv(n)).as(n).isEqualTo(n);
        }
        assertThat(Fmt.csv(Fmt.NO_DELAY)).isEqualTo("-");
        assertThat(Fmt.csv("udp")).isEqualTo("udp");
    }

    @Test
    void aHostileTransportNameComesOutInertInTheSummaryCsv() {
        LoadedResult r = Fixtures.load(dir, "r.json", Fixtures.withStep(0,
            s -> s.put("transport", "=cmd|' /C calc'!A0")));
        String csv = SummaryTable.of(List.of(r)).csv();
        assertThat(csv).contains(",'=cmd|' /C calc'!A0,").doesNotContain(",=cmd");
    }
}
