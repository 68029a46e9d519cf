package io.lossprobe.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.result.LossBurst;
import io.lossprobe.core.result.SignedHistogram;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.zip.DataFormatException;
import org.HdrHistogram.Histogram;

/** A flow's receive summary on the control channel; histograms travel in HdrHistogram's compressed form. */
final class SummaryCodec {
    private SummaryCodec() {
    }

    static ObjectNode encode(FlowReceiver.Summary s) {
        ObjectNode n = ControlChannel.mapper().createObjectNode();
        n.put("step", s.step());
        n.put("received", s.received());
        n.put("duplicates", s.duplicates());
        n.put("reordered", s.reordered());
        n.put("late", s.late());
        n.put("lateDuplicates", s.lateDuplicates());
        n.put("corrupt", s.corrupt());
        n.put("foreign", s.foreign());
        n.put("warmup", s.warmup());
        n.put("lossEvents", s.lossEvents());
        n.put("lostInRuns", s.lostInRuns());
        n.set("lossBurst", ControlChannel.mapper().valueToTree(s.lossBurst()));
        n.put("delay", histogram(s.delay().atOrAboveZero()));
        if (s.delay().magnitudesBelowZero() != null) {
            n.put("delayBelowZero", histogram(s.delay().magnitudesBelowZero()));
        }
        n.put("ipdv", histogram(s.ipdv()));
        n.put("jitterNs", s.jitterNs());
        n.put("warmupDelays", s.warmupDelays());
        n.put("warmupMinDelayNs", s.warmupMinDelayNs());
        return n;
    }

    static FlowReceiver.Summary decode(JsonNode node) throws ControlProtocolException {
        Fields f = new Fields(node);
        long max = Long.MAX_VALUE;
        try {
            LossBurst burst = ControlChannel.mapper().treeToValue(f.object("lossBurst"), LossBurst.class);
            return new FlowReceiver.Summary(f.integer("step", 0, 65535), f.longValue("received", 0, max),
                f.longValue("duplicates", 0, max), f.longValue("reordered", 0, max), f.longValue("late", 0, max), f.longValue("lateDuplicates", 0, max),
                f.longValue("corrupt", 0, max), f.longValue("foreign", 0, max), f.longValue("warmup", 0, max), f.longValue("lossEvents", 0, max),
                f.longValue("lostInRuns", 0, max), burst,
                new SignedHistogram(histogram(f.string("delay", 1 << 20)),
                    node.has("delayBelowZero") ? histogram(f.string("delayBelowZero", 1 << 20)) : null),
                histogram(f.string("ipdv", 1 << 20)), node.path("jitterNs").asDouble(),
                f.longValue("warmupDelays", 0, max), f.longValue("warmupMinDelayNs", Long.MIN_VALUE, max));
        } catch (com.fasterxml.jackson.core.JsonProcessingException | IllegalArgumentException e) {
            throw new ControlProtocolException("bad flow summary: " + e.getMessage());
        }
    }

    private static String histogram(Histogram h) {
        ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int length = h.encodeIntoCompressedByteBuffer(buf);
        return Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buf.array(), length));
    }

    private static Histogram histogram(String base64) throws ControlProtocolException {
        try {
            return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(base64)), 0);
        } catch (DataFormatException | IllegalArgumentException | java.nio.BufferUnderflowException e) {
            throw new ControlProtocolException("bad histogram: " + e.getMessage());
        }
    }
}
