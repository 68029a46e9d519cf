package io.lossprobe.analysis;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import io.lossprobe.core.plan.Level;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What a healthy run looks like: thresholds per transport and level, and how far a run may fall behind a baseline.
 * A JSON file (see docs/check.md and docs/examples/policy.json); unknown keys are refused so a typo cannot
 * silently disable a threshold.
 *
 * @param description     free text, ignored
 * @param requireComplete fail when the run's status is not {@code complete} (default true)
 * @param defaults        thresholds for every transport and level
 * @param transports      per transport: thresholds over the defaults, and per level over those
 * @param baseline        regression against an earlier result, or null
 */
public record Policy(String description, Boolean requireComplete, Thresholds defaults,
                     Map<String, TransportThresholds> transports, Baseline baseline) {

    private static final ObjectMapper STRICT = new ObjectMapper()
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    public Policy {
        defaults = defaults == null ? Thresholds.NONE : defaults;
        transports = transports == null ? Map.of() : Map.copyOf(transports);
    }

    /**
     * Limits for one step; a null field is not checked.
     *
     * @param maxLossPercent             most loss allowed, % of sent
     * @param minAchievedRate            fewest messages received per second
     * @param minAchievedPercentOfTarget fewest received per second as % of the level's target (not for {@code max})
     * @param maxP99DelayMs              largest p99 one-way delay, ms
     * @param maxRetransmitsPer1k        most retransmits per 1,000 messages sent (TCP, Aeron)
     * @param maxNaksPer1k               most NAKs per 1,000 messages sent (Aeron)
     */
    public record Thresholds(Double maxLossPercent, Double minAchievedRate, Double minAchievedPercentOfTarget,
                             Double maxP99DelayMs, Double maxRetransmitsPer1k, Double maxNaksPer1k) {
        public static final Thresholds NONE = new Thresholds(null, null, null, null, null, null);

        /** These limits, with {@code over}'s set fields taking precedence. */
        public Thresholds overriddenBy(Thresholds over) {
            if (over == null) {
                return this;
            }
            return new Thresholds(pick(over.maxLossPercent, maxLossPercent), pick(over.minAchievedRate,
                minAchievedRate), pick(over.minAchievedPercentOfTarget, minAchievedPercentOfTarget),
                pick(over.maxP99DelayMs, maxP99DelayMs), pick(over.maxRetransmitsPer1k, maxRetransmitsPer1k),
                pick(over.maxNaksPer1k, maxNaksPer1k));
        }

        private static Double pick(Double a, Double b) {
            return a != null ? a : b;
        }
    }

    /** A transport's thresholds (same keys as {@link Thresholds}) and per-level ones keyed by level ("30k"). */
    public record TransportThresholds(Double maxLossPercent, Double minAchievedRate,
                                      Double minAchievedPercentOfTarget, Double maxP99DelayMs,
                                      Double maxRetransmitsPer1k, Double maxNaksPer1k,
                                      Map<String, Thresholds> levels) {
        public TransportThresholds {
            Map<String, Thresholds> normalized = new LinkedHashMap<>();
            if (levels != null) {
                for (Map.Entry<String, Thresholds> e : levels.entrySet()) {
                    // "30000" and "30k" name the same level.
                    normalized.put(Level.parse(e.getKey()).toString(), e.getValue());
                }
            }
            levels = Map.copyOf(normalized);
        }

        Thresholds own() {
            return new Thresholds(maxLossPercent, minAchievedRate, minAchievedPercentOfTarget, maxP99DelayMs,
                maxRetransmitsPer1k, maxNaksPer1k);
        }
    }

    /**
     * Regression against an earlier result.
     *
     * @param file                   baseline result file, relative to the policy file; {@code --baseline} overrides
     * @param maxLossIncreasePoints  loss % may rise by this many percentage points (default 0.1)
     * @param maxAchievedDropPercent the achieved rate may fall by this % (default 5)
     * @param maxP99IncreasePercent  p99 delay may rise by this % (default 50)
     */
    public record Baseline(String file, Double maxLossIncreasePoints, Double maxAchievedDropPercent,
                           Double maxP99IncreasePercent) {
        public Comparison.Tolerance tolerance() {
            Comparison.Tolerance d = Comparison.Tolerance.DEFAULT;
            return new Comparison.Tolerance(
                maxLossIncreasePoints != null ? maxLossIncreasePoints : d.lossPercentPoints(),
                maxAchievedDropPercent != null ? maxAchievedDropPercent : d.achievedPercent(),
                maxP99IncreasePercent != null ? maxP99IncreasePercent : d.p99Percent());
        }
    }

    /** The limits that apply to one transport at one level: level over transport over defaults. */
    public Thresholds thresholdsFor(String transport, String level) {
        TransportThresholds t = transports.get(transport);
        if (t == null) {
            return defaults;
        }
        return defaults.overriddenBy(t.own()).overriddenBy(t.levels().get(level));
    }

    public boolean completeRequired() {
        return requireComplete == null || requireComplete;
    }

    /**
     * Reads a policy file.
     *
     * @throws InputException one line naming the file and the problem (unknown key, bad value, not JSON)
     */
    public static Policy read(Path file) throws InputException {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new InputException("cannot read policy " + file + ": no such file");
        } catch (IOException e) {
            throw new InputException("cannot read policy " + file + ": " + e.getMessage());
        }
        try {
            Policy p = STRICT.readValue(bytes, Policy.class);
            if (p == null) {
                throw new InputException("policy " + file + " is empty");
            }
            return p;
        } catch (UnrecognizedPropertyException e) {
            String known = e.getKnownPropertyIds() == null ? "" : e.getKnownPropertyIds().stream()
                .map(String::valueOf).sorted().collect(Collectors.joining(", "));
            throw new InputException("policy " + file + ": unknown key '" + e.getPropertyName() + "'"
                + where(e) + (known.isEmpty() ? "" : " (known keys: " + known + ")"));
        } catch (JsonMappingException e) {
            Throwable cause = e.getCause();
            if (cause instanceof com.fasterxml.jackson.core.exc.StreamReadException syntax) {
                throw new InputException("policy " + file + " is not valid JSON: " + shortMessage(syntax)
                    + location(syntax));
            }
            throw new InputException("policy " + file + ": " + io.lossprobe.core.result.JsonProblems.describe(e));
        } catch (JsonProcessingException e) {
            throw new InputException("policy " + file + " is not valid JSON: " + shortMessage(e) + location(e));
        } catch (IOException e) {
            throw new InputException("cannot read policy " + file + ": " + e.getMessage());
        }
    }

    private static String where(JsonMappingException e) {
        String p = io.lossprobe.core.result.JsonProblems.path(e);
        // The last element is the offending key itself for unknown keys; name where it sits.
        if (e instanceof UnrecognizedPropertyException u && p.endsWith(u.getPropertyName())) {
            p = p.substring(0, p.length() - u.getPropertyName().length());
            p = p.endsWith(".") ? p.substring(0, p.length() - 1) : p;
            return p.isEmpty() ? " at the top level" : " in " + p;
        }
        return p.isEmpty() ? "" : " at " + p;
    }

    private static String shortMessage(JsonProcessingException e) {
        String m = LoadedResult.oneLine(e.getOriginalMessage());
        int noise = m.indexOf(" (start marker");
        return noise < 0 ? m : m.substring(0, noise);
    }

    private static String location(JsonProcessingException e) {
        return e.getLocation() == null ? "" : " (line " + e.getLocation().getLineNr() + ", column "
            + e.getLocation().getColumnNr() + ")";
    }
}
