package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The lab classes' lanes ({@link LabLanes}) hold: every {@code lab}-tagged class of this module takes a lane (else it
 * runs in the loopback chain, where it costs CI its whole time), and a namespace prefix is used by the classes of one
 * lane only (two lanes sharing a prefix build, clear and tear down one lab under each other: PatternLabSystemTest and
 * LabSystemTest did, both {@code lp-}). Read from the sources, so it also holds for a class a run did not select.
 */
class LabLanesTest {
    private static final Path SOURCES = Paths.get("src/test/java/io/lossprobe/cli");
    private static final Pattern PREFIX = Pattern.compile("(?:Lab\\.assumed|MulticastLab\\.up)\\(\"[A-Z0-9_]+\", "
        + "\"([a-z0-9]+-)\"");
    private static final Pattern LANE = Pattern.compile("^@LabLanes\\.(First|Second)$", Pattern.MULTILINE);

    @Test
    void everyLabClassTakesALaneAndEachPrefixIsOneLanes() throws Exception {
        List<Path> labClasses;
        try (Stream<Path> files = Files.list(SOURCES)) {
            labClasses = files.filter(p -> p.toString().endsWith(".java")).filter(LabLanesTest::tagged).sorted()
                .toList();
        }
        assertThat(labClasses).as("lab-tagged classes").hasSizeGreaterThanOrEqualTo(10);
        Map<String, String> laneOfPrefix = new HashMap<>();
        for (Path p : labClasses) {
            String source = Files.readString(p);
            Matcher lane = LANE.matcher(source);
            assertThat(lane.find()).as("%s takes @LabLanes.First or .Second", p.getFileName()).isTrue();
            Matcher prefix = PREFIX.matcher(source);
            assertThat(prefix.find()).as("%s names its lab's default prefix", p.getFileName()).isTrue();
            String before = laneOfPrefix.putIfAbsent(prefix.group(1), lane.group(1));
            assertThat(before == null || before.equals(lane.group(1)))
                .as("prefix %s of %s is used in lane %s too", prefix.group(1), p.getFileName(), before).isTrue();
        }
    }

    private static boolean tagged(Path p) {
        try {
            return Files.readString(p).contains("@Tag(\"lab\")");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
