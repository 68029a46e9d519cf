package io.lossprobe.control;

import io.lossprobe.core.accounting.FailedRanges;
import java.util.Map;
import java.util.TreeMap;

/**
 * Failed sequence ranges on the control channel: {@code {"3": [first, end, first, end, ...], ...}} per flow, the
 * ranges added since the last message (each side keeps how far it shipped). Decoding checks every entry; the
 * ledger itself refuses ranges out of order.
 */
final class FailedRangesCodec {
    /** Most (first, end) pairs one message may carry over all flows. */
    static final int MAX_PAIRS = FailedRanges.MAX_RANGES;

    private FailedRangesCodec() {
    }

    /** The ranges of each flow added since {@code shipped[flow]} (null when none); advances shipped. */
    static Map<Integer, long[]> encodeNew(FailedRanges[] ledger, int[] shipped) {
        Map<Integer, long[]> out = null;
        for (int flow = 0; flow < ledger.length; flow++) {
            long[] pairs = ledger[flow].pairsFrom(shipped[flow]);
            if (pairs.length == 0) {
                continue;
            }
            if (out == null) {
                out = new TreeMap<>();
            }
            out.put(flow, pairs);
            shipped[flow] += pairs.length / 2;
        }
        return out;
    }

    /** Appends {@code failed} (null: none) to the flows' ledgers, after checking all of it. */
    static void decodeInto(Map<Integer, long[]> failed, FailedRanges[] ledger) throws ControlProtocolException {
        if (failed == null) {
            return;
        }
        int pairs = 0;
        for (Map.Entry<Integer, long[]> e : failed.entrySet()) {
            int flow = e.getKey();
            long[] values = e.getValue();
            if (flow < 0 || flow >= ledger.length || values == null || values.length % 2 != 0) {
                throw new ControlProtocolException("'failed' has a bad entry for flow " + flow);
            }
            pairs += values.length / 2;
            if (pairs > MAX_PAIRS) {
                throw new ControlProtocolException("'failed' carries more than " + MAX_PAIRS + " ranges");
            }
            for (int i = 0; i < values.length; i += 2) {
                if (values[i] < 0 || values[i + 1] <= values[i]) {
                    throw new ControlProtocolException("'failed' has a negative, empty or inverted range");
                }
            }
        }
        for (Map.Entry<Integer, long[]> e : failed.entrySet()) {
            ledger[e.getKey()].addPairs(e.getValue());
        }
    }
}
