package io.lossprobe.analysis;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lossprobe.core.result.ResultFiles;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * Result files for tests: a real UDP run on loopback (8 ports, levels 10k and 50k, no loss) as recorded by the
 * engine, edited as JSON to make each kind of trouble.
 */
final class Fixtures {
    private Fixtures() {
    }

    static ObjectNode sample() {
        return resource("/sample-result.json");
    }

    /** A real echo-mode run on loopback: UDP, 2 ports, levels 5k and 20k (500 ms windows; replies were lost). */
    static ObjectNode echo() {
        return resource("/sample-echo.json");
    }

    private static ObjectNode resource(String name) {
        try (InputStream in = Fixtures.class.getResourceAsStream(name)) {
            return (ObjectNode) ResultFiles.mapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The sample as a run to another host: each step carries the clock offset, the receiving host's counters and a
     * one-way delay corrected by the offset ({@code basis: clockOffset}, {@code uncertaintyNs}); the plan's bind
     * address is the target as typed. With {@code reverse}, the receiving host's counters are absent (the
     * receivers ran here) and the bind address is this host's.
     */
    static ObjectNode twoHosts(String target, boolean reverse) {
        ObjectNode root = sample();
        ((ObjectNode) root.get("plan")).put("bindAddress", reverse ? "0.0.0.0" : target);
        for (var step : root.withArray("steps")) {
            ObjectNode s = (ObjectNode) step;
            s.putObject("clockOffset").put("offsetNs", 123_456_789L).put("uncertaintyNs", 45_000)
                .put("rttNs", 90_000).put("exchanges", 16);
            s.put("clockDriftNs", 1_000);
            ((ObjectNode) s.get("delay")).put("basis", "clockOffset").put("uncertaintyNs", 52_000);
            if (!reverse) {
                s.putObject("receiverHostCounters").put("Udp.InDatagrams", s.get("counts").get("received").asLong());
            }
        }
        return root;
    }

    /** The sample with {@code edit} applied to step {@code index} (0 = udp 10k, 1 = udp 50k). */
    static ObjectNode withStep(int index, Consumer<ObjectNode> edit) {
        ObjectNode root = sample();
        edit.accept((ObjectNode) root.withArray("steps").get(index));
        return root;
    }

    /**
     * The sample's steps repeated as tcp and aeron steps (their counters as those transports report them, all
     * zero), so charts have three transports to tell apart.
     */
    static ObjectNode threeTransports() {
        ObjectNode root = sample();
        var steps = root.withArray("steps");
        int n = steps.size();
        for (String t : new String[] {"tcp", "aeron"}) {
            for (int i = 0; i < n; i++) {
                ObjectNode copy = steps.get(i).deepCopy();
                copy.put("transport", t);
                ObjectNode counters = copy.putObject("transportCounters");
                if (t.equals("tcp")) {
                    counters.put("tcp.totalRetrans", 0);
                } else {
                    counters.put("aeron.retransmitsSent", 0).put("aeron.naksSent", 0).put("aeron.naksReceived", 0);
                }
                copy.remove("socketDrops");
                steps.add(copy);
            }
        }
        ((ObjectNode) root.get("plan")).putArray("transports").add("udp").add("tcp").add("aeron");
        return root;
    }

    /**
     * Hand-made per-interval series (ten 100 ms intervals per step, loss in the 50k step's last three) and an NDR
     * and a PDR search, in the shapes documented in {@link RunExtras}.
     */
    static ObjectNode withIntervalsAndSearch(ObjectNode root) {
        for (var step : root.withArray("steps")) {
            long rate = step.get("targetRate").asLong();
            var intervals = ((ObjectNode) step).putArray("intervals");
            for (int i = 0; i < 10; i++) {
                long sent = rate / 10;
                long lost = rate >= 50_000 && i >= 7 ? 40L * (i - 6) : 0;
                ObjectNode iv = intervals.addObject().put("startNs", i * 100_000_000L).put("endNs",
                    (i + 1) * 100_000_000L).put("sent", sent).put("received", sent - lost).put("lost", lost);
                iv.putObject("delay").put("p50Ns", 200_000 + 10_000L * i).put("p90Ns", 400_000)
                    .put("p99Ns", 900_000 + 100_000L * i).put("p999Ns", 2_000_000).put("maxNs", 3_000_000);
            }
        }
        var search = root.putArray("search");
        search.addObject().put("transport", "udp").put("criterion", "NDR").put("maxLossRatio", 0)
            .put("rate", 32_000).put("lowerBound", 30_000).put("upperBound", 34_000).put("lossRatio", 0)
            .put("trials", 6);
        search.addObject().put("transport", "udp").put("criterion", "PDR").put("maxLossRatio", 0.005)
            .put("rate", 41_000).put("lowerBound", 40_000).put("upperBound", 42_000).put("lossRatio", 0.004)
            .put("trials", 7);
        return root;
    }

    /**
     * {@code root} with a {@code run --probe echo:1000} flow on port 45402 beside every step, in the shape the
     * engine writes: 1,000 requests, {@code lost} of them without a reply; round trip p50 40 us and p99 60 us at
     * 10k, rising with the step's rate (p99 2.1 ms at 50k).
     */
    static ObjectNode withProbe(ObjectNode root, long lost) {
        for (var step : root.withArray("steps")) {
            long rate = step.get("targetRate").asLong();
            long p50 = rate >= 50_000 ? 300_000 : 40_000;
            long p99 = rate >= 50_000 ? 2_100_000 : 60_000;
            ObjectNode echo = ((ObjectNode) step).putObject("probe").put("mode", "echo").put("ratePerSecond", 1000)
                .put("port", 45402).put("messageSize", 64).putObject("echo");
            echo.put("requestsSent", 1000).put("requestsReceived", 1000 - lost).put("requestsLost", lost)
                .put("repliesReceived", 1000 - lost).put("repliesLost", 0).put("roundTripLost", lost)
                .put("duplicateReplies", 0).put("reorderedReplies", 0).put("lateReplies", 0)
                .put("tps", 1000 - lost);
            echo.putObject("rtt").put("count", 1000 - lost).put("meanNs", p50 + 1000).put("minNs", p50 / 2)
                .put("p50Ns", p50).put("p90Ns", (p50 + p99) / 2).put("p99Ns", p99).put("p999Ns", p99 + 5000)
                .put("maxNs", p99 + 9000);
        }
        return root;
    }

    static void lose(ObjectNode step, long lost) {
        ObjectNode counts = (ObjectNode) step.get("counts");
        counts.put("lost", lost);
        counts.put("received", counts.get("sent").asLong() - lost);
    }

    /** A step whose delay histogram recorded nothing (every message lost), as the engine writes it. */
    static void noDelay(ObjectNode step) {
        step.set("delay", ResultFiles.mapper().valueToTree(io.lossprobe.core.result.Latency.EMPTY));
    }

    static Path write(Path dir, String name, ObjectNode root) {
        try {
            Path file = dir.resolve(name);
            Files.write(file, ResultFiles.mapper().writeValueAsBytes(root));
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static LoadedResult load(Path dir, String name, ObjectNode root) {
        try {
            return LoadedResult.read(write(dir, name, root));
        } catch (InputException e) {
            throw new IllegalStateException(e);
        }
    }
}
