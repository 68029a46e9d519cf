package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A mesh file's host names and errors are anyone's. In the Markdown matrix a {@code |} in a name made a column of
 * its own, a line break started a heading or a row, a backtick a code span; each is escaped now, so every row of a
 * matrix has exactly its columns and nothing starts a line but the report itself.
 */
class MeshMarkdownEscapeTest {
    private static final List<String> NAMES = List.of("a|b", "c`d`", "e\n# injected\n| x | y |");

    private static MeshResult mesh() throws Exception {
        RunResult run = ResultFiles.mapper().treeToValue(Fixtures.sample(), RunResult.class);
        List<MeshResult.Host> hosts = List.of(new MeshResult.Host(NAMES.get(0), "10.0.0.1", 7400),
            new MeshResult.Host(NAMES.get(1), "10.0.0.2", 7400), new MeshResult.Host(NAMES.get(2), "10.0.0.3", 7400));
        List<MeshResult.Planned> planned = List.of(new MeshResult.Planned(NAMES.get(0), NAMES.get(1), 0),
            new MeshResult.Planned(NAMES.get(1), NAMES.get(2), 1));
        List<MeshResult.Pair> pairs = List.of(
            new MeshResult.Pair(NAMES.get(0), NAMES.get(1), 0, MeshResult.COMPLETE, null, "2026-12-01T03:05:00Z",
                3000L, 10L, null, null, run),
            new MeshResult.Pair(NAMES.get(1), NAMES.get(2), 1, MeshResult.FAILED, "refused\n## not a heading |",
                "2026-12-01T03:05:30Z", 12L, 0L, null, null, null));
        return new MeshResult(MeshResult.KIND, MeshResult.SCHEMA_VERSION, "lossprobe test", "2026-12-01T03:05:00Z",
            "2026-12-01T03:06:00Z", "full", hosts, List.of(NAMES.get(0), NAMES.get(1)),
            new MeshResult.Schedule(2, 0, 10_000, "2026-12-01T03:05:00Z", planned), pairs);
    }

    @Test
    void hostNamesAndErrorsStayInTheirCells() throws Exception {
        String md = MeshReport.of(mesh()).markdown();
        assertThat(md.lines()).noneMatch(l -> l.startsWith("# injected") || l.startsWith("## not a heading")
            || l.startsWith("| x |"));
        assertThat(md).contains("a\\|b", "c\\`d\\`").doesNotContain("c`d");
        for (String row : md.lines().filter(l -> l.startsWith("| ")).toList()) {
            // source column, one per host, the totals: 5 cells, so 6 unescaped bars
            assertThat(row.replace("\\|", "").chars().filter(c -> c == '|').count()).as(row).isEqualTo(6);
        }
        assertThat(md).contains("- c\\`d\\` -> e # injected \\| x \\| y \\|: failed: refused ## not a heading \\|");
    }
}
