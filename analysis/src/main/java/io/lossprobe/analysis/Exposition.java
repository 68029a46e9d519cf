package io.lossprobe.analysis;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.ResultFiles;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Quantile;
import io.prometheus.metrics.model.snapshots.Quantiles;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/** What the run textfile and the mesh textfile share: the name label, the rate label, delay summaries, the text. */
final class Exposition {
    /** Significant digits kept: the measurements carry fewer, and more only prints floating-point noise. */
    private static final MathContext DIGITS = new MathContext(10);
    /** The quantiles of a delay summary: p50, p90, p99, p99.9 and the maximum. */
    static final double[] QUANTILES = {0.5, 0.9, 0.99, 0.999, 1};

    private Exposition() {
    }

    /**
     * The first 8 hex digits of the SHA-256 of {@code identity} as JSON (map keys sorted) after {@code prefix}.
     */
    static String defaultName(String prefix, Object identity) {
        try {
            byte[] json = ResultFiles.mapper().writer().with(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
                .writeValueAsBytes(identity);
            byte[] sha = MessageDigest.getInstance("SHA-256").digest(json);
            return prefix + HexFormat.of().formatHex(sha, 0, 4);
        } catch (JsonProcessingException | NoSuchAlgorithmException e) {
            throw new IllegalStateException("cannot hash " + identity, e);
        }
    }

    /**
     * The {@code name} label of a run when no {@code --name} is given: {@code plan-} and 8 hex digits of the plan as
     * the result file holds it, less its {@code bindAddress} (the peer, which the {@code target} label says). The
     * same command gives the same name every night, against any server; two plans that differ in transports,
     * levels, durations, ports or options get different names. {@code unnamed} for a file without a plan.
     */
    static String defaultName(Plan plan) {
        if (plan == null) {
            return "unnamed";
        }
        ObjectNode json = ResultFiles.mapper().valueToTree(plan);
        json.remove("bindAddress");
        return defaultName("plan-", json);
    }

    /** The name given, or the default when none (null or blank). */
    static String name(String given, String byDefault) {
        return given == null || given.isBlank() ? byDefault : given.strip();
    }

    /**
     * The {@code offered_rate} label: the level's target rate in messages per second as a plain number
     * ({@code 10000}, not {@code 10k}), {@code max} for a level with no target; a policy's {@code *} stays.
     */
    static String rateLabel(String level) {
        try {
            Level l = Level.parse(level);
            return l.isMax() ? "max" : Long.toString(l.ratePerSecond());
        } catch (IllegalArgumentException e) {
            return level;
        }
    }

    /** A delay distribution as a summary point (quantiles, count, sum in seconds); null when it has no values. */
    static SummarySnapshot.SummaryDataPointSnapshot summary(Labels labels, Latency l) {
        if (l == null || l.count() == 0) {
            return null;
        }
        long[] ns = {l.p50Ns(), l.p90Ns(), l.p99Ns(), l.p999Ns(), l.maxNs()};
        Quantiles.Builder q = Quantiles.builder();
        for (int i = 0; i < ns.length; i++) {
            q.quantile(new Quantile(QUANTILES[i], round(ns[i] / 1e9)));
        }
        SummarySnapshot.SummaryDataPointSnapshot.Builder b = SummarySnapshot.SummaryDataPointSnapshot.builder()
            .labels(labels).quantiles(q.build()).count(l.count());
        if (!Double.isNaN(l.meanNs())) {
            b.sum(round(l.meanNs() * l.count() / 1e9));
        }
        return b.build();
    }

    /** The text exposition (Prometheus text format 0.0.4) of {@code metrics}. */
    static String text(List<MetricSnapshot> metrics) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.builder().setIncludeCreatedTimestamps(false).build()
                .write(bytes, new MetricSnapshots(metrics));
        } catch (IOException e) {
            throw new IllegalStateException("cannot happen writing to memory", e);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    static double round(double v) {
        return v == 0 || Double.isNaN(v) || Double.isInfinite(v) ? v : new BigDecimal(v).round(DIGITS).doubleValue();
    }
}
