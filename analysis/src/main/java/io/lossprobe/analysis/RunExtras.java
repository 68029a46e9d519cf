package io.lossprobe.analysis;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.result.SearchBound;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parts of a result file the result records do not carry (yet): a step's per-interval series and a run's rate
 * searches (NDR/PDR). The report draws them when a file has them and leaves them out when it has not, so files from
 * any version read alike. The shapes expected (all times in ns; see docs/report.md):
 *
 * <pre>
 * "steps": [ { ..., "intervals": [ { "startNs": 0, "endNs": 100000000, "sent": 10000, "received": 9990,
 *                                    "lost": 10, "delay": { "p50Ns": .., "p90Ns": .., "p99Ns": .., "p999Ns": ..,
 *                                                           "maxNs": .. } }, ... ] } ]
 * "search": [ { "transport": "udp", "messageSize": 64, "criterion": "ndr", "maxLossRatio": 0, "rate": 812000,
 *               "lowerBound": 800000, "upperBound": 825000, "lossRatio": 0, "boundedBy": "path",
 *               "trials": [ ... ] }, ... ]
 * </pre>
 *
 * {@code startNs}/{@code endNs} count from the step's window start; {@code trials} is a count or an array of trials;
 * {@code rate} may be null (nothing passed: see {@code boundedBy}); {@code messageSize} and {@code boundedBy} may be
 * absent. An entry without the fields it needs (a transport) is skipped. {@code lossprobe run --search} and
 * {@code --interval} write these shapes (docs/results.md).
 *
 * @param intervals per step, by the step's index in the file's {@code steps} array
 * @param searches  the run's rate searches, in file order
 */
public record RunExtras(Map<Integer, List<Interval>> intervals, List<Search> searches) {
    public static final RunExtras NONE = new RunExtras(Map.of(), List.of());

    /**
     * One interval of a step.
     *
     * @param delayNs p50, p90, p99, p99.9 and max of the interval's delay; -1 where absent
     */
    public record Interval(long startNs, long endNs, long sent, long received, long lost, long[] delayNs) {
        public double seconds() {
            return (endNs - startNs) / 1e9;
        }

        public double lossPercent() {
            return sent == 0 ? 0 : 100.0 * lost / sent;
        }
    }

    /**
     * A search for the highest rate within a loss criterion.
     *
     * @param criterion    as written ("NDR": no loss; "PDR": partial drop rate within {@code maxLossRatio})
     * @param maxLossRatio the loss the criterion allows (0 for NDR), NaN when the file does not say
     * @param rate         the rate found, messages/s
     * @param lowerBound   the highest rate measured within the criterion
     * @param upperBound   the lowest rate measured beyond it
     * @param lossRatio    loss measured at {@code rate}
     * @param trials       measurements the search took, 0 when not given
     * @param messageSize  the message size searched at, 0 when not given
     * @param boundedBy    what bounds the answer from above ({@code path}, {@code sender}, {@code max}, {@code min},
     *                     {@code trials}, {@code stopped}), null when not given or not known to this version
     */
    public record Search(String transport, String criterion, double maxLossRatio, double rate, double lowerBound,
                  double upperBound, double lossRatio, int trials, int messageSize, SearchBound boundedBy) {
        public Search(String transport, String criterion, double maxLossRatio, double rate, double lowerBound,
                      double upperBound, double lossRatio, int trials) {
            this(transport, criterion, maxLossRatio, rate, lowerBound, upperBound, lossRatio, trials, 0, null);
        }

        /** Whether a rate was found (a search failing at its lowest rate has none). */
        public boolean found() {
            return !Double.isNaN(rate);
        }
    }

    static RunExtras of(JsonNode root) {
        if (root == null) {
            return NONE;
        }
        Map<Integer, List<Interval>> intervals = new LinkedHashMap<>();
        JsonNode steps = root.path("steps");
        for (int i = 0; i < steps.size(); i++) {
            List<Interval> list = intervals(steps.get(i).path("intervals"));
            if (!list.isEmpty()) {
                intervals.put(i, list);
            }
        }
        List<Search> searches = new ArrayList<>();
        JsonNode search = root.path("search");
        for (JsonNode s : search.isArray() ? search : List.of(search)) {
            if (s.isObject() && s.path("transport").isTextual()
                && (s.path("rate").isNumber() || s.path("boundedBy").isTextual())) {
                JsonNode trials = s.path("trials");
                searches.add(new Search(s.get("transport").asText(), s.path("criterion").asText("search"),
                    number(s, "maxLossRatio"), number(s, "rate"), number(s, "lowerBound"),
                    number(s, "upperBound"), number(s, "lossRatio"),
                    trials.isArray() ? trials.size() : trials.asInt(0), s.path("messageSize").asInt(0),
                    s.path("boundedBy").isTextual() ? SearchBound.of(s.get("boundedBy").asText()) : null));
            }
        }
        return intervals.isEmpty() && searches.isEmpty() ? NONE : new RunExtras(intervals, searches);
    }

    private static List<Interval> intervals(JsonNode array) {
        List<Interval> out = new ArrayList<>();
        if (!array.isArray()) {
            return out;
        }
        for (JsonNode n : array) {
            if (!n.path("startNs").isNumber() || !n.path("endNs").isNumber() || !n.path("sent").isNumber()
                || n.get("endNs").asLong() <= n.get("startNs").asLong()) {
                continue;
            }
            long sent = n.get("sent").asLong();
            long received = n.path("received").asLong(sent - n.path("lost").asLong(0));
            long lost = n.path("lost").asLong(sent - received);
            JsonNode d = n.path("delay");
            long[] delay = new long[5];
            String[] keys = {"p50Ns", "p90Ns", "p99Ns", "p999Ns", "maxNs"};
            for (int k = 0; k < keys.length; k++) {
                delay[k] = d.path(keys[k]).isNumber() && d.path("count").asLong(1) > 0 ? d.get(keys[k]).asLong() : -1;
            }
            out.add(new Interval(n.get("startNs").asLong(), n.get("endNs").asLong(), sent, received, lost, delay));
        }
        return out;
    }

    private static double number(JsonNode n, String key) {
        return n.path(key).isNumber() ? n.get(key).asDouble() : Double.NaN;
    }
}
