package io.lossprobe.core.result;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultFilesTest {
    /**
     * The head of a file written before transportSettings and the plan's transportOptions existed (settings were
     * mixed into socketBuffers).
     */
    static final String OLD_FILE = """
        {
          "schemaVersion" : 1, "tool" : "lossprobe", "startedAt" : "2026-11-30T05:48:07Z",
          "finishedAt" : "2026-11-30T05:48:12Z", "status" : "complete",
          "environment" : {
            "lossprobeVersion" : "0.1.0-SNAPSHOT", "host" : "vm", "os" : "Linux", "kernel" : "6.18.44", "cores" : 2,
            "jvm" : "OpenJDK 64-Bit Server VM 17.0.15+6",
            "socketBuffers" : { "net.core.rmem_max" : 4, "udp.io.epoll" : 1, "udp.receiveBufferGranted" : 8388608 }
          },
          "plan" : {
            "transports" : [ "udp" ], "ports" : 8, "basePort" : 44000, "levels" : [ "10k", "50k" ],
            "durationNs" : 1000000000, "warmupNs" : 1000000000, "drainNs" : 1000000000, "messageSize" : 64,
            "bindAddress" : "127.0.0.1"
          },
          "steps" : [ ]
        }
        """;

    /** A small result (no steps) with the given status. */
    static RunResult minimal(String status) throws java.io.IOException {
        RunResult r = ResultFiles.mapper().readValue(OLD_FILE, RunResult.class);
        return new RunResult(RunResult.SCHEMA_VERSION, r.tool(), r.startedAt(), r.finishedAt(), RunStatus.of(status),
            null,
            r.environment(), r.plan(), r.counters(), r.steps());
    }

    @Test
    void anOldFileWithoutTransportSettingsReadsWithAnEmptyMap(@TempDir Path dir) throws Exception {
        RunResult r = ResultFiles.read(Files.writeString(dir.resolve("old.json"), OLD_FILE));
        assertThat(r.plan().transportOptions()).isEmpty();
        assertThat(r.plan().levels()).hasSize(2);
        assertThat(r.environment().transportSettings()).isEmpty();
        assertThat(r.environment().socketBuffers()).containsEntry("udp.receiveBufferGranted", 8_388_608L);
    }

    /** An old file has one size (its messageSize), no search and no intervals; nothing of them is written back. */
    @Test
    void anOldFileHasOneSizeNoSearchAndNoIntervals(@TempDir Path dir) throws Exception {
        RunResult r = ResultFiles.read(Files.writeString(dir.resolve("old.json"), OLD_FILE));
        assertThat(r.plan().sizes()).containsExactly(64);
        assertThat(r.plan().search()).isNull();
        assertThat(r.plan().intervalNs()).isZero();
        assertThat(r.search()).isNull();
        assertThat(ResultFiles.mapper().writeValueAsString(r)).doesNotContain("\"search\" : [");
    }

    /**
     * Searches and intervals in the shapes docs/report.md documented before lossprobe wrote them (trials as a
     * count) still read; an entry that fits no shape is left out, not the whole file.
     */
    @Test
    void searchesInTheReportsOlderShapeReadAndAMalformedEntryIsLeftOut(@TempDir Path dir) throws Exception {
        String file = OLD_FILE.replace("\"steps\" : [ ]", """
            "steps" : [ ],
            "search" : [ { "transport" : "udp", "criterion" : "NDR", "maxLossRatio" : 0, "rate" : 812000,
                           "lowerBound" : 800000, "upperBound" : 825000, "lossRatio" : 0, "trials" : 7 },
                         { "transport" : "udp", "criterion" : "PDR", "rate" : "fast" },
                         42 ]""");
        RunResult r = ResultFiles.read(Files.writeString(dir.resolve("shapes.json"), file));
        assertThat(r.search()).hasSize(1);
        SearchResult ndr = r.search().get(0);
        assertThat(ndr.rate()).isEqualTo(812_000);
        assertThat(ndr.upperBound()).isEqualTo(825_000);
        assertThat(ndr.trials()).isEmpty();
    }

    /** Each status and bound is written as the string files have always held, and reads back as itself. */
    @Test
    void statusesAndSearchBoundsAreTheirStringsInTheFile(@TempDir Path dir) throws Exception {
        for (String status : List.of("running", "complete", "interrupted", "failed")) {
            RunResult r = minimal(status);
            assertThat(ResultFiles.mapper().writeValueAsString(r)).contains("\"status\" : \"" + status + "\"");
            assertThat(ResultFiles.read(Files.writeString(dir.resolve(status + ".json"),
                ResultFiles.mapper().writeValueAsString(r))).status()).isSameAs(r.status()).hasToString(status);
        }
        for (String bound : List.of("path", "sender", "max", "min", "trials", "stopped")) {
            RunResult r = ResultFiles.read(Files.writeString(dir.resolve(bound + ".json"), withSearch(bound)));
            assertThat(r.search()).singleElement().extracting(SearchResult::boundedBy).hasToString(bound);
            assertThat(ResultFiles.mapper().writeValueAsString(r)).contains("\"boundedBy\" : \"" + bound + "\"");
        }
    }

    /** A status or bound this version does not know (a newer writer's) reads as absent, not as a broken file. */
    @Test
    void anUnknownStatusOrSearchBoundReadsAsAbsent(@TempDir Path dir) throws Exception {
        RunResult r = ResultFiles.read(Files.writeString(dir.resolve("newer.json"),
            withSearch("budget").replace("\"status\" : \"complete\"", "\"status\" : \"paused\"")));
        assertThat(r.status()).isNull();
        assertThat(r.search()).singleElement().satisfies(s -> {
            assertThat(s.boundedBy()).isNull();
            assertThat(s.rate()).isEqualTo(812_000);
        });
    }

    private static String withSearch(String boundedBy) {
        return OLD_FILE.replace("\"steps\" : [ ]", """
            "steps" : [ ],
            "search" : [ { "transport" : "udp", "criterion" : "ndr", "maxLossRatio" : 0, "rate" : 812000,
                           "lowerBound" : 812000, "precision" : 0.02, "converged" : true,
                           "boundedBy" : "%s", "searchNs" : 1, "trials" : [ ] } ]""".formatted(boundedBy));
    }
}
