package io.lossprobe.cli;

import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.result.IntervalResult;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.SearchResult;
import io.lossprobe.core.result.SearchTrial;
import io.lossprobe.core.result.StepResult;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * {@code run --stream FILE|-}: the run as JSON lines while it goes, for tools that read a pipe. Each line is one
 * object whose {@code type} says what it is: {@code interval} (one of a step's intervals), {@code step} (the step's
 * totals), {@code trial} (a rate search's trial), {@code search} (its finding for a criterion), {@code end}. A
 * step's lines are written when it closes: its loss is final only then (a message may arrive until Tmax). Written
 * on the engine's thread, flushed after every step; never on a measured thread.
 */
final class JsonLines {
    private static final ObjectWriter LINE = ResultFiles.mapper().writer()
        .without(SerializationFeature.INDENT_OUTPUT);

    private final OutputStream out;

    JsonLines(OutputStream out) {
        this.out = out;
    }

    void step(StepResult s) throws IOException {
        if (s.intervals() != null) {
            for (IntervalResult iv : s.intervals()) {
                ObjectNode line = head("interval", s);
                line.setAll((ObjectNode) ResultFiles.mapper().valueToTree(iv));
                line.put("lossPercent", iv.lossPercent());
                write(line);
            }
        }
        ObjectNode line = head("step", s);
        line.put("targetRate", s.targetRate());
        line.put("windowNs", s.windowNs());
        line.set("counts", ResultFiles.mapper().valueToTree(s.counts()));
        line.put("lossPercent", s.lossPercent());
        line.put("achievedSendRate", s.achievedSendRate());
        line.put("achievedReceiveRate", s.achievedReceiveRate());
        line.put("saturated", s.saturated());
        line.set("delay", ResultFiles.mapper().valueToTree(s.delay()));
        write(line);
        out.flush();
    }

    void trial(String transport, int size, SearchTrial t, Map<String, String> verdicts) throws IOException {
        ObjectNode line = ResultFiles.mapper().createObjectNode();
        line.put("type", "trial");
        line.put("transport", transport);
        line.put("messageSize", size);
        ObjectNode fields = ResultFiles.mapper().valueToTree(t);
        fields.remove("verdict");
        fields.remove("outlier");
        line.setAll(fields);
        line.set("verdicts", ResultFiles.mapper().valueToTree(verdicts));
        write(line);
        out.flush();
    }

    void search(SearchResult s) throws IOException {
        ObjectNode line = ResultFiles.mapper().createObjectNode();
        line.put("type", "search");
        ObjectNode fields = ResultFiles.mapper().valueToTree(s);
        fields.remove("trials");
        line.setAll(fields);
        line.put("trials", s.trials().size());
        write(line);
        out.flush();
    }

    void end(String status) throws IOException {
        ObjectNode line = ResultFiles.mapper().createObjectNode();
        line.put("type", "end");
        line.put("status", status);
        write(line);
        out.flush();
    }

    private static ObjectNode head(String type, StepResult s) {
        ObjectNode line = ResultFiles.mapper().createObjectNode();
        line.put("type", type);
        line.put("transport", s.transport());
        if (s.messageSize() != null) {
            line.put("messageSize", s.messageSize());
        }
        line.put("step", s.step());
        line.put("level", s.level().toString());
        return line;
    }

    private void write(ObjectNode line) throws IOException {
        out.write(LINE.writeValueAsString(line).getBytes(StandardCharsets.UTF_8));
        out.write('\n');
    }
}
