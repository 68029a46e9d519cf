package io.lossprobe.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.accounting.FailedRanges;
import java.util.Iterator;
import java.util.Map;

/**
 * Failed sequence ranges on the control channel: {@code {"3": [first, end, first, end, ...], ...}} per flow, the
 * ranges added since the last message (each side keeps how far it shipped). Decoding checks every field; the
 * ledger itself refuses ranges out of order.
 */
final class FailedRangesCodec {
    /** Most (first, end) pairs one message may carry over all flows. */
    static final int MAX_PAIRS = FailedRanges.MAX_RANGES;

    private FailedRangesCodec() {
    }

    /** Puts the ranges of each flow added since {@code shipped[flow]} into {@code field}; advances shipped. */
    static void encodeNew(ObjectNode msg, String field, FailedRanges[] ledger, int[] shipped) {
        ObjectNode out = null;
        for (int flow = 0; flow < ledger.length; flow++) {
            long[] pairs = ledger[flow].pairsFrom(shipped[flow]);
            if (pairs.length == 0) {
                continue;
            }
            if (out == null) {
                out = msg.putObject(field);
            }
            ArrayNode arr = out.putArray(Integer.toString(flow));
            for (long v : pairs) {
                arr.add(v);
            }
            shipped[flow] += pairs.length / 2;
        }
    }

    /** Appends the ranges in {@code msg.field} (absent: none) to the flows' ledgers. */
    static void decodeInto(JsonNode msg, String field, FailedRanges[] ledger) throws ControlProtocolException {
        JsonNode node = msg.get(field);
        if (node == null || node.isNull()) {
            return;
        }
        if (!node.isObject()) {
            throw new ControlProtocolException("field '" + field + "' must be an object");
        }
        int pairs = 0;
        Iterator<Map.Entry<String, JsonNode>> it = node.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            int flow;
            try {
                flow = Integer.parseInt(e.getKey());
            } catch (NumberFormatException ex) {
                throw new ControlProtocolException("'" + field + "' names no flow: " + e.getKey());
            }
            JsonNode arr = e.getValue();
            if (flow < 0 || flow >= ledger.length || !arr.isArray() || arr.size() % 2 != 0) {
                throw new ControlProtocolException("'" + field + "' has a bad entry for flow " + e.getKey());
            }
            pairs += arr.size() / 2;
            if (pairs > MAX_PAIRS) {
                throw new ControlProtocolException("'" + field + "' carries more than " + MAX_PAIRS + " ranges");
            }
            long[] values = new long[arr.size()];
            for (int i = 0; i < values.length; i++) {
                JsonNode v = arr.get(i);
                if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < 0) {
                    throw new ControlProtocolException("'" + field + "' has a bad number for flow " + flow);
                }
                values[i] = v.asLong();
            }
            for (int i = 0; i < values.length; i += 2) {
                if (values[i + 1] <= values[i]) {
                    throw new ControlProtocolException("'" + field + "' has an empty or inverted range");
                }
            }
            ledger[flow].addPairs(values);
        }
    }
}
