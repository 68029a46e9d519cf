package io.lossprobe.cli;

import io.lossprobe.core.accounting.IntervalTally;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.plan.SearchPlan;
import io.lossprobe.core.plan.Units;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Option;

/**
 * {@code run}'s options beyond the levels: a size axis ({@code --sizes}), per-interval counts ({@code --interval})
 * and the NDR/PDR rate search ({@code --search} and its settings). See docs/search.md.
 */
final class ShapeOptions {
    /** What per-interval delay histograms may hold at once before --interval is refused as too fine. */
    static final long MAX_INTERVAL_MEMORY_BYTES = 512L << 20;
    /** The default lowest search rate, per port. */
    static final long DEFAULT_MIN_RATE_PER_PORT = 100;
    static final long MIN_DEFAULT_SHORT_TRIAL_NS = TimeUnit.MILLISECONDS.toNanos(100);

    @Option(names = "--sizes", split = ",", paramLabel = "BYTES",
        description = "Message sizes to step through, each a pass of the levels (and search) per transport: "
            + "64,512,1400,9000. Sizes above the path MTU fragment (UDP). Instead of --size.")
    List<String> sizes;

    @Option(names = "--interval", paramLabel = "TIME",
        description = "Also count every step per interval of TIME (500ms, 1s): sent, received, lost by intended "
            + "send time, duplicates, reordered, rates and delay percentiles; --hlog then logs a histogram per "
            + "interval.")
    String interval;

    @Option(names = "--search", split = ",", paramLabel = "CRITERIA",
        completionCandidates = CompletionValues.SearchCriteria.class,
        description = "Search the highest rate within ndr (no loss) and/or pdr (loss at most --pdr-loss), per "
            + "transport and size: short trials, then full-length ones near the answer (docs/search.md). Without "
            + "--levels, only the search runs.")
    List<String> search;

    @Option(names = "--pdr-loss", defaultValue = "0.5%", paramLabel = "PCT",
        description = "Loss PDR allows, in percent (0.5%% or 0.5). Default: ${DEFAULT-VALUE}.")
    String pdrLoss;

    @Option(names = "--search-precision", defaultValue = "2%", paramLabel = "PCT",
        description = "Stop when upper / lower bound - 1 is at most this. Default: ${DEFAULT-VALUE}.")
    String precision;

    @Option(names = "--search-min", paramLabel = "RATE",
        description = "Lowest rate tried (messages/s over all flows). Default: 100 per port.")
    String searchMin;

    @Option(names = "--search-max", defaultValue = "max", paramLabel = "RATE",
        description = "Highest rate tried; max = first trial as fast as the sender goes (with --target: the "
            + "server's --max-rate). Default: ${DEFAULT-VALUE}.")
    String searchMax;

    @Option(names = "--search-trial", paramLabel = "TIME",
        description = "Short trials' window; the full-length trials take --duration. Default: a fifth of "
            + "--duration, at least 100ms.")
    String searchTrial;

    @Option(names = "--search-trials", defaultValue = "40", paramLabel = "N",
        description = "Most trials one search takes. Default: ${DEFAULT-VALUE}.")
    int searchTrials;

    @Option(names = "--latency-at", split = ",", paramLabel = "PCT",
        description = "After a search, measure full steps at these fractions of the PDR (of the NDR without pdr) "
            + "for their delay: 10%%,50%%,90%%.")
    List<String> latencyAt;

    /** Whether any option of this set asks for more than the plain levels. */
    boolean reshapes() {
        return sizes != null || interval != null || search != null;
    }

    /**
     * {@code base} with the sizes, interval and search asked for.
     *
     * @param levelsGiven whether --levels was given (without it, a search runs alone)
     * @param sizeGiven   whether --size was given
     * @throws IllegalArgumentException with one line for bad input
     */
    Plan shape(Plan base, boolean levelsGiven, boolean sizeGiven) {
        if (sizes != null && sizeGiven) {
            throw new IllegalArgumentException("give --size or --sizes, not both");
        }
        List<Integer> sizeList = null;
        if (sizes != null) {
            sizeList = new ArrayList<>();
            for (String s : sizes) {
                long bytes = Units.parseBytes(s, "--sizes");
                sizeList.add((int) Math.min(Integer.MAX_VALUE, bytes));
            }
        }
        long intervalNs = 0;
        if (interval != null) {
            intervalNs = Units.parseDurationNs(interval, "--interval");
            if (intervalNs == 0) {
                throw new IllegalArgumentException("--interval must be greater than 0");
            }
        }
        SearchPlan searchPlan = null;
        List<Level> levels = base.levels();
        if (search != null) {
            searchPlan = searchPlan(base);
            if (!levelsGiven) {
                levels = List.of();
            }
        } else if (latencyAt != null) {
            throw new IllegalArgumentException("--latency-at goes with --search");
        }
        Plan shaped = new Plan(base.transports(), base.ports(), base.basePort(), levels, base.durationNs(),
            base.warmupNs(), base.drainNs(), sizeList == null ? base.messageSize() : sizeList.get(0),
            base.bindAddress(), base.mode(), base.concurrency(), base.transportOptions(), sizeList, searchPlan,
            intervalNs, base.dscp(), base.pattern(), base.seed(), base.sizeMix());
        long histograms = (long) shaped.ports() * shaped.intervals(shaped.durationNs());
        if (histograms * IntervalTally.histogramBytes() > MAX_INTERVAL_MEMORY_BYTES) {
            throw new IllegalArgumentException("--interval " + interval + " over a "
                + StepTable.nanos(shaped.durationNs()) + " window with " + shaped.ports() + " ports needs " + histograms
                + " delay histograms of " + IntervalTally.histogramBytes() / 1024 + " KiB (at most "
                + (MAX_INTERVAL_MEMORY_BYTES >> 20) + " MiB): choose a longer interval or fewer ports");
        }
        return shaped;
    }

    private SearchPlan searchPlan(Plan base) {
        List<String> criteria = new ArrayList<>();
        for (String c : search) {
            criteria.add(c.trim().toLowerCase(java.util.Locale.ROOT));
        }
        long min = searchMin == null ? DEFAULT_MIN_RATE_PER_PORT * base.ports()
            : Units.parseDecimal(searchMin, "--search-min");
        long max = searchMax.trim().equalsIgnoreCase("max") ? 0 : Units.parseDecimal(searchMax, "--search-max");
        long trialNs;
        if (searchTrial != null) {
            trialNs = Units.parseDurationNs(searchTrial, "--search-trial");
        } else {
            trialNs = Math.min(base.durationNs(), Math.max(MIN_DEFAULT_SHORT_TRIAL_NS, base.durationNs() / 5));
        }
        List<Double> fractions = new ArrayList<>();
        if (latencyAt != null) {
            for (String f : latencyAt) {
                fractions.add(percent(f, "--latency-at"));
            }
        }
        return new SearchPlan(criteria, percent(pdrLoss, "--pdr-loss"), percent(precision, "--search-precision"),
            min, max, trialNs, searchTrials, fractions);
    }

    /** A percentage as a ratio: {@code 0.5%} and {@code 0.5} are both 0.005. */
    static double percent(String text, String what) {
        String s = text == null ? "" : text.trim();
        if (s.endsWith("%")) {
            s = s.substring(0, s.length() - 1).trim();
        }
        try {
            return new BigDecimal(s).movePointLeft(2).doubleValue();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " is not a percentage like 0.5%: '" + text + "'");
        }
    }
}
