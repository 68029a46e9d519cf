package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.CraftedHistograms;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.StepResult;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An {@code .hlog} beside a result is a file from anywhere. A line whose histogram header asks for five significant
 * digits over 1..2^62 made HdrHistogram's log reader allocate 49 MB for it (and so on for every such line, until an
 * OutOfMemoryError nobody catches); now every histogram's header is checked first and such a log is refused: the
 * plot falls back to the result's own percentiles.
 */
class HostileHistogramLogTest {
    @TempDir
    Path dir;

    private String log(boolean bomb) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream ps = new PrintStream(bytes, false, StandardCharsets.UTF_8)) {
            HistogramLogWriter w = new HistogramLogWriter(ps);
            w.outputLogFormatVersion();
            w.outputLegend();
            Histogram h = Latency.newHistogram();
            for (int i = 1; i <= 1000; i++) {
                h.recordValue(10_000L * i);
            }
            w.outputIntervalHistogram(0, 1, h);
        }
        String text = bytes.toString(StandardCharsets.UTF_8);
        return bomb ? text + "1.000,1.000,0.000," + Base64.getEncoder().encodeToString(
            CraftedHistograms.ranges(5, 1, 1L << 62)) + "\n" : text;
    }

    @Test
    void aLogWithAHistogramBombIsRefusedAndTheSummaryDrawn() throws Exception {
        LoadedResult r = Fixtures.load(dir, "r.json", Fixtures.sample());
        StepResult step = r.run().steps().get(0);
        Path hlog = StepDistributions.hlogOf(r.file(), step, "delay");

        Files.writeString(hlog, log(false));
        assertThat(StepDistributions.of(r.file(), step, "delay").full()).as("a genuine log is drawn").isTrue();

        Files.writeString(hlog, log(true));
        assertThat(StepDistributions.of(r.file(), step, "delay").full()).as("a crafted one is not").isFalse();
    }

    /**
     * A log over {@link StepDistributions#MAX_LOG_BYTES} is never read (one endless line would be read into memory
     * whole): here a genuine log followed by a comment line of NULs that takes it just over the bound (a sparse file)
     * was read and drawn before; now the summary is drawn.
     */
    @Test
    void aLogOverTheBoundIsNotRead() throws Exception {
        LoadedResult r = Fixtures.load(dir, "r.json", Fixtures.sample());
        StepResult step = r.run().steps().get(0);
        Path hlog = StepDistributions.hlogOf(r.file(), step, "delay");
        Files.writeString(hlog, log(false) + "#");
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(hlog.toFile(), "rw")) {
            f.setLength(StepDistributions.MAX_LOG_BYTES + 1);
        }
        assertThat(StepDistributions.of(r.file(), step, "delay").full()).isFalse();
    }

    /**
     * The log's name is built from the result's {@code transport}, which is the file's: {@code ../../x} made the
     * report read {@code ../../x.step0.delay.hlog} relative to the result, outside its directory. Such a name has no
     * log: the summary is drawn.
     */
    @Test
    void aTransportNameThatClimbsOutOfTheDirectoryNamesNoLog() throws Exception {
        Path inner = Files.createDirectories(dir.resolve("runs/today"));
        for (String bad : new String[] {"../../outside", "a/b", "..", "udp/../../x", "x/../../../outside", ""}) {
            LoadedResult r = Fixtures.load(inner, "r.json", Fixtures.withStep(0, s -> s.put("transport", bad)));
            StepResult step = r.run().steps().get(0);
            assertThat(StepDistributions.hlogOf(r.file(), step, "delay")).as(bad).isNull();
        }
        // r.x/../../../outside.step0.delay.hlog from runs/today is the temporary directory's: it is never read.
        Files.createDirectories(inner.resolve("r.x"));
        Files.writeString(dir.resolve("outside.step0.delay.hlog"), log(false));
        LoadedResult r = Fixtures.load(inner, "r.json",
            Fixtures.withStep(0, s -> s.put("transport", "x/../../../outside")));
        assertThat(StepDistributions.of(r.file(), r.run().steps().get(0), "delay").full()).isFalse();
        LoadedResult good = Fixtures.load(inner, "r.json", Fixtures.sample());
        assertThat(StepDistributions.hlogOf(good.file(), good.run().steps().get(0), "delay").getParent())
            .isEqualTo(inner.toAbsolutePath());
    }
}
