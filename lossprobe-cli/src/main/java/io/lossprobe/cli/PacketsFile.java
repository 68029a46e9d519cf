package io.lossprobe.cli;

import io.lossprobe.core.engine.PacketCapture;
import io.lossprobe.core.engine.PacketStep;
import io.lossprobe.core.result.StepResult;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

/**
 * {@code run --packets FILE}: the steps' rows as CSV (gzipped when FILE ends in {@code .gz}), written between passes
 * on the engine's thread. Times are nanoseconds from the step's window start on the senders' clock (docs/packets.md).
 */
final class PacketsFile implements PacketCapture.Sink, AutoCloseable {
    static final String HEADER = "transport,size,step,offered_rate,flow,seq,status,intended_ns,sent_ns,received_ns,"
        + "delay_ns,reordered,duplicates,late_duplicates";

    private final Path path;
    private final Writer out;
    private long rows;
    private long overLimit;

    private PacketsFile(Path path, Writer out) {
        this.path = path;
        this.out = out;
    }

    /** Creates (or truncates) {@code path} and writes the header. */
    static PacketsFile create(Path path) throws IOException {
        OutputStream stream = Files.newOutputStream(path);
        if (path.getFileName().toString().endsWith(".gz")) {
            stream = new GZIPOutputStream(stream, 1 << 16);
        }
        Writer w = new BufferedWriter(new OutputStreamWriter(stream, StandardCharsets.UTF_8), 1 << 16);
        w.write(HEADER);
        w.write('\n');
        return new PacketsFile(path, w);
    }

    @Override
    public void write(PacketStep step) throws IOException {
        StepResult r = step.result();
        String prefix = r.transport() + "," + r.messageSize() + "," + r.step() + ","
            + (r.level().isMax() ? "" : Long.toString(r.targetRate())) + ",";
        long t0 = step.windowStartNs();
        StringBuilder line = new StringBuilder(128);
        step.rows((flow, seq, status, intended, sent, received, reordered, duplicates, lateDuplicates) -> {
            line.setLength(0);
            line.append(prefix).append(flow).append(',').append(seq).append(',').append(status).append(',');
            time(line, intended, t0).append(',');
            time(line, sent, t0).append(',');
            time(line, received, t0).append(',');
            if (received != PacketStep.NONE && intended != PacketStep.NONE) {
                line.append(received - intended);
            }
            line.append(',').append(reordered ? 1 : 0).append(',').append(duplicates).append(',')
                .append(lateDuplicates).append('\n');
            out.append(line);
            rows++;
        });
        for (int f = 0; f < step.received().length; f++) {
            overLimit += step.overLimit(f);
        }
    }

    private static StringBuilder time(StringBuilder line, long ns, long t0) {
        return ns == PacketStep.NONE ? line : line.append(ns - t0);
    }

    /** What was written, for the run's last lines. */
    String summary() {
        return rows + " packet row(s) written to " + path
            + (overLimit == 0 ? "" : "; " + overLimit + " message(s) over --packets-limit not written");
    }

    @Override
    public void close() throws IOException {
        out.close();
    }
}
