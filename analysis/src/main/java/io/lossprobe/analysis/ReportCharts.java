package io.lossprobe.analysis;

import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.StepResult;
import java.awt.Color;
import java.awt.Font;
import java.awt.Paint;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.annotations.XYTextAnnotation;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.SymbolAxis;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.PaintScale;
import org.jfree.chart.renderer.xy.XYBlockRenderer;
import org.jfree.chart.title.PaintScaleLegend;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.DefaultXYZDataset;

/**
 * The charts over a run's rates: loss against rate (the answer), achieved against offered, retransmits, and the
 * per-port heatmap. Rates go on a logarithmic axis with a tick at every level. See docs/report.md.
 */
final class ReportCharts {
    static final int WIDE = 900;
    static final int WIDE_HEIGHT = 420;
    static final int SMALL = 660;
    static final int SMALL_HEIGHT = 320;
    private static final Font CELL = new Font("SansSerif", Font.PLAIN, 10);
    private final Palette palette;

    ReportCharts(Palette palette) {
        this.palette = palette;
    }

    /** Loss % of sent against offered rate: one colour per transport, a marker per step, searches marked. */
    ChartParts.Figure lossCurve(String id, List<StepMetrics> steps, List<RunExtras.Search> searches) {
        ChartParts.Lines lines = new ChartParts.Lines();
        for (Map.Entry<String, List<StepMetrics>> e : byTransport(steps).entrySet()) {
            int s = lines.series(e.getKey(), palette.transport(e.getKey()), ChartParts.LINE, true);
            for (StepMetrics m : e.getValue()) {
                lines.add(s, m.offeredRate(), m.lossPercent(), lossTip(m));
            }
        }
        ValueAxis y = ChartParts.valueAxis("loss % of sent", lines.yValues(), true, true);
        LevelAxis x = levelAxis("offered rate (messages/s)", steps);
        XYPlot plot = ChartParts.plot(x, y);
        lines.addTo(plot, 0, ChartParts.floor(y));
        int k = 0;
        double middle = Math.sqrt(x.getLowerBound() * x.getUpperBound());
        for (RunExtras.Search s : searches) {
            if (!s.found()) {
                continue; // nothing passed: the verdict says so in words
            }
            ValueMarker m = new ValueMarker(s.rate(), palette.transport(s.transport()), Palette.dash(1, 1.6f));
            m.setLabel(ChartParts.shorten(Verdict.searchName(s), 24) + " " + RateFormat.compact(s.rate()));
            m.setLabelFont(ChartParts.NOTE);
            m.setLabelPaint(palette.transport(s.transport()));
            // Right of the line in the left half, left of it in the right half: the label stays in the plot.
            boolean right = s.rate() < middle;
            m.setLabelAnchor(right ? RectangleAnchor.TOP_RIGHT : RectangleAnchor.TOP_LEFT);
            m.setLabelTextAnchor(right ? TextAnchor.TOP_LEFT : TextAnchor.TOP_RIGHT);
            m.setLabelOffset(new RectangleInsets(4 + 15 * k++, 4, 2, 4));
            plot.addDomainMarker(m);
        }
        JFreeChart chart = ChartParts.chart("Loss against offered rate", plot, true);
        List<String> clean = lossless(steps);
        if (!clean.isEmpty()) {
            // Lines of zero loss lie on one another at the bottom: say which they are.
            ChartParts.note(chart, clean.size() == byTransport(steps).size() ? "No loss at any level."
                : "No loss at any level: " + ChartParts.shorten(String.join(", ", clean), 80) + ".");
        }
        return new ChartParts.Figure(id, "loss-curve", chart, WIDE, WIDE_HEIGHT, true);
    }

    /** The transports (series, as {@link #byTransport} names them) that lost no message at any level. */
    static List<String> lossless(List<StepMetrics> steps) {
        return byTransport(steps).entrySet().stream().filter(e -> e.getValue().stream().allMatch(m -> m.lost() == 0))
            .map(Map.Entry::getKey).toList();
    }

    /**
     * In place of a loss curve when no step lost a message (it would be a flat line at 0 with every transport
     * under the last one drawn): "No step lost a message: udp, tcp and aeron delivered every message they sent at
     * every level from 10k to 50k." Steps that sent nothing are named, since they delivered nothing either.
     */
    static String noLossSentence(List<StepMetrics> steps) {
        List<String> levels = steps.stream().map(StepMetrics::level).distinct().toList();
        String at = levels.size() == 1 ? "at " + levels.get(0) : levels.size() == 2
            ? "at " + levels.get(0) + " and " + levels.get(1)
            : "at every level from " + levels.get(0) + " to " + levels.get(levels.size() - 1);
        List<String> transports = List.copyOf(byTransport(steps).keySet());
        String out = "No step lost a message: " + words(transports) + " delivered every message "
            + (transports.size() == 1 ? "it" : "they") + " sent " + at + ".";
        List<String> idle = steps.stream().filter(m -> m.sent() == 0).map(m -> m.transport() + " at " + m.level())
            .toList();
        return idle.isEmpty() ? out : out + " Nothing was sent by " + words(idle) + ".";
    }

    /**
     * Under a loss curve where some transports lost and others did not: the others' lines lie at 0, under the
     * lossy ones' wherever those lost nothing, so they are named ("tcp and aeron lost no message at any level").
     */
    static String losslessSentence(List<String> lossless) {
        return words(lossless) + " lost no message at any level: " + (lossless.size() == 1 ? "its line lies"
            : "their lines lie") + " at 0, where other lines can hide " + (lossless.size() == 1 ? "it." : "them.");
    }

    /** "udp", "udp and tcp", "udp, tcp and aeron". */
    static String words(List<String> items) {
        return items.size() == 1 ? items.get(0) : String.join(", ", items.subList(0, items.size() - 1)) + " and "
            + items.get(items.size() - 1);
    }

    static String lossTip(StepMetrics m) {
        return String.format(Locale.ROOT, "%s %s: loss %s %% (%,d of %,d lost)%nreceived %s, sent %s%s",
            m.transport(), levelName(m), ChartParts.sig2(m.lossPercent()), m.lost(), m.sent(),
            ChartParts.rate(m.achievedRate()), ChartParts.rate(m.achievedSendRate()),
            m.saturated() ? " (saturated)" : "");
    }

    /** The level as typed, with the rate a {@code max} level reached. */
    static String levelName(StepMetrics m) {
        return m.targetRate() > 0 ? m.level() : m.level() + " (" + RateFormat.compact(m.offeredRate()) + "/s sent)";
    }

    /** Received and sent per second against offered rate, with the ideal line y = x. */
    ChartParts.Figure achievedVsRate(String id, List<StepMetrics> steps) {
        ChartParts.Lines lines = new ChartParts.Lines();
        int ideal = lines.series("offered (ideal)", Color.GRAY, Palette.dash(2, 1.2f), true);
        double lowest = Double.MAX_VALUE;
        for (StepMetrics m : steps) {
            lines.add(ideal, m.offeredRate(), m.offeredRate(), null);
        }
        for (Map.Entry<String, List<StepMetrics>> e : byTransport(steps).entrySet()) {
            Color c = palette.transport(e.getKey());
            int rx = lines.series(e.getKey() + " received/s", c, ChartParts.LINE, true);
            int tx = lines.series(e.getKey() + " sent/s", Palette.shade(c, 2), Palette.dash(1, 1.6f), true);
            for (StepMetrics m : e.getValue()) {
                String tip = lossTip(m);
                lines.add(rx, m.offeredRate(), m.achievedRate(), tip);
                lines.add(tx, m.offeredRate(), m.achievedSendRate(), tip);
                if (m.achievedRate() > 0) {
                    lowest = Math.min(lowest, m.achievedRate());
                }
            }
        }
        LevelAxis y = levelAxis("achieved rate (messages/s)", steps);
        if (lowest < y.getLowerBound()) {
            y.setRange(lowest / 1.5, y.getUpperBound());
        }
        XYPlot plot = ChartParts.plot(levelAxis("offered rate (messages/s)", steps), y);
        lines.addTo(plot, 0, y.getLowerBound());
        return new ChartParts.Figure(id, "achieved", ChartParts.chart("Achieved against offered rate", plot, true),
            WIDE, WIDE_HEIGHT, true);
    }

    /**
     * Retransmits and NAKs per 1,000 messages sent against offered rate; empty when no transport counted any (the
     * report then says so in words, see {@link #repairsInWords}).
     */
    Optional<ChartParts.Figure> retransmitsVsRate(String id, List<StepMetrics> steps) {
        ChartParts.Lines lines = new ChartParts.Lines();
        boolean anyNonZero = false;
        for (Map.Entry<String, List<StepMetrics>> e : byTransport(steps).entrySet()) {
            Color c = palette.transport(e.getKey());
            int re = lines.series(e.getKey() + " retransmits/1k", c, ChartParts.LINE, true);
            int nak = lines.series(e.getKey() + " NAKs/1k", Palette.shade(c, 2), Palette.dash(1, 1.6f), true);
            for (StepMetrics m : e.getValue()) {
                lines.add(re, m.offeredRate(), m.retransmitsPer1k(), String.format(Locale.ROOT,
                    "%s %s: %s retransmits per 1,000 sent (%,.0f)", m.transport(), levelName(m),
                    ChartParts.sig2(m.retransmitsPer1k()), m.retransmits()));
                lines.add(nak, m.offeredRate(), m.naksPer1k(), String.format(Locale.ROOT,
                    "%s %s: %s NAKs per 1,000 sent (%,.0f)", m.transport(), levelName(m),
                    ChartParts.sig2(m.naksPer1k()), m.naks()));
                anyNonZero |= m.retransmitsPer1k() > 0 || m.naksPer1k() > 0;
            }
        }
        if (!anyNonZero) {
            return Optional.empty();
        }
        ValueAxis y = ChartParts.valueAxis("per 1,000 messages sent", lines.yValues(), true, true);
        XYPlot plot = ChartParts.plot(levelAxis("offered rate (messages/s)", steps), y);
        lines.addTo(plot, 0, ChartParts.floor(y));
        return Optional.of(new ChartParts.Figure(id, "retransmits",
            ChartParts.chart("Retransmits and NAKs against offered rate", plot, true), WIDE, WIDE_HEIGHT, true));
    }

    /** Retransmits and NAKs in words, per transport: "tcp: no retransmits at any level". */
    static List<String> repairsInWords(List<StepMetrics> steps) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, List<StepMetrics>> e : byTransport(steps).entrySet()) {
            double re = 0;
            double nak = 0;
            boolean hasRe = false;
            boolean hasNak = false;
            for (StepMetrics m : e.getValue()) {
                if (!Double.isNaN(m.retransmits())) {
                    hasRe = true;
                    re += m.retransmits();
                }
                if (!Double.isNaN(m.naks())) {
                    hasNak = true;
                    nak += m.naks();
                }
            }
            String t = e.getKey() + ": ";
            if (!hasRe && !hasNak) {
                out.add(t + "does not repair (no retransmit or NAK counters)");
                continue;
            }
            List<String> parts = new ArrayList<>();
            if (hasRe) {
                parts.add(re == 0 ? "no retransmits at any level" : String.format(Locale.ROOT,
                    "%,.0f retransmits over all levels", re));
            }
            if (hasNak) {
                parts.add(nak == 0 ? "no NAKs" : String.format(Locale.ROOT, "%,.0f NAKs", nak));
            }
            out.add(t + String.join(", ", parts));
        }
        return out;
    }

    /**
     * Loss % per port (rows) and level (columns) of one transport. Each decade of loss has its own colour, so 0.3 %
     * and 25 % never look alike; cells with loss carry their number when they are tall enough to read, and every
     * cell its values on hover. A red row is a port-specific problem, a red column the rate itself.
     */
    ChartParts.Figure heatmap(String id, String transport, List<StepResult> steps) {
        List<String> levels = new ArrayList<>();
        List<double[]> cells = new ArrayList<>();
        List<String> tips = new ArrayList<>();
        int minPort = Integer.MAX_VALUE;
        int maxPort = Integer.MIN_VALUE;
        for (StepResult s : steps) {
            levels.add(s.level().toString());
            for (FlowResult f : s.flows()) {
                double loss = f.counts().lossPercent();
                cells.add(new double[] {levels.size() - 1, f.port(), loss});
                tips.add(String.format(Locale.ROOT, "%s %s port %d: loss %s %% (%,d of %,d lost)%s", transport,
                    s.level(), f.port(), ChartParts.sig2(loss), f.counts().lost(), f.counts().sent(),
                    f.socketDrops() == null ? "" : String.format(Locale.ROOT, ", %,d kernel socket drops",
                        f.socketDrops())));
                minPort = Math.min(minPort, f.port());
                maxPort = Math.max(maxPort, f.port());
            }
        }
        double[][] xyz = new double[3][cells.size()];
        for (int i = 0; i < cells.size(); i++) {
            xyz[0][i] = cells.get(i)[0];
            xyz[1][i] = cells.get(i)[1];
            xyz[2][i] = cells.get(i)[2];
        }
        DefaultXYZDataset data = new DefaultXYZDataset();
        data.addSeries(transport + " loss %", xyz);
        SymbolAxis x = new SymbolAxis("level (target messages/s)", levels.toArray(new String[0]));
        x.setGridBandsVisible(false);
        NumberAxis y = new NumberAxis("port");
        y.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
        if (cells.isEmpty()) {
            minPort = 0;
            maxPort = 1;
        }
        y.setRange(minPort - 0.5, maxPort + 0.5);
        y.setInverted(true);
        int ports = maxPort - minPort + 1;
        int height = Math.max(300, Math.min(1400, 150 + ports * 14));
        double cellPx = (height - 150.0) / ports;
        if (cellPx < 16) {
            y.setTickUnit(new NumberTickUnit(Math.max(1, Math.ceil(ports * 16 / (height - 150.0)))));
        }
        XYPlot plot = new XYPlot(data, x, y, lossBlocks(tips));
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinesVisible(false);
        plot.setRangeGridlinesVisible(false);
        plot.setNoDataMessage("no per-flow results");
        int width = Math.max(460, Math.min(WIDE, 200 + 110 * levels.size()));
        double cellWidthPx = (width - 200.0) / Math.max(1, levels.size());
        if (cellPx >= 11 && cellWidthPx >= 40) {
            labelLossCells(plot, cells);
        }
        JFreeChart chart = ChartParts.chart(transport + ": loss % by port and level", plot, false);
        chart.addSubtitle(lossLegend());
        return new ChartParts.Figure(id, "heatmap", chart, width, height, true);
    }

    /** The heatmap's cells: one block per port and level, coloured by its loss class, {@code tips} on hover. */
    private static XYBlockRenderer lossBlocks(List<String> tips) {
        XYBlockRenderer r = new XYBlockRenderer();
        r.setPaintScale(LossClasses.SCALE);
        r.setBlockWidth(1.0);
        r.setBlockHeight(1.0);
        r.setDefaultToolTipGenerator((ds, s, item) -> tips.get(item));
        return r;
    }

    /** The heatmap's cells with loss ({level, port, loss %}) labelled with it, white on the dark classes. */
    private static void labelLossCells(XYPlot plot, List<double[]> cells) {
        for (double[] c : cells) {
            if (c[2] > 0) {
                XYTextAnnotation a = new XYTextAnnotation(ChartParts.sig2(c[2]), c[0], c[1]);
                a.setFont(CELL);
                a.setPaint(LossClasses.of(c[2]) >= 4 ? Color.WHITE : Color.BLACK);
                plot.addAnnotation(a);
            }
        }
    }

    /** The heatmap's legend on the right: one band per loss class. */
    private static PaintScaleLegend lossLegend() {
        SymbolAxis legendAxis = new SymbolAxis("loss %", LossClasses.LABELS);
        legendAxis.setGridBandsVisible(false);
        legendAxis.setRange(-0.5, LossClasses.COLORS.length - 0.5);
        legendAxis.setTickLabelFont(new Font("SansSerif", Font.PLAIN, 11));
        PaintScaleLegend legend = new PaintScaleLegend(LossClasses.BY_CLASS, legendAxis);
        legend.setPosition(RectangleEdge.RIGHT);
        legend.setMargin(new RectangleInsets(10, 10, 10, 10));
        legend.setStripWidth(14);
        return legend;
    }

    /**
     * Loss in decades, one colour each: zero, below 0.01 %, 0.01-0.1, 0.1-1, 1-10, 10 % and more (ColorBrewer
     * YlOrRd, with green for zero).
     */
    static final class LossClasses {
        static final Color[] COLORS = {new Color(0xc7e9c0), new Color(0xffffb2), new Color(0xfecc5c),
            new Color(0xfd8d3c), new Color(0xe31a1c), new Color(0x67000d)};
        static final String[] LABELS = {"0", "< 0.01", "0.01-0.1", "0.1-1", "1-10", ">= 10"};
        static final PaintScale SCALE = new Scale(false);
        static final PaintScale BY_CLASS = new Scale(true);

        static int of(double lossPercent) {
            if (Double.isNaN(lossPercent) || lossPercent <= 0) {
                return 0;
            }
            if (lossPercent < 0.01) {
                return 1;
            }
            return Math.min(5, 2 + (int) Math.floor(Math.log10(lossPercent / 0.01)));
        }

        private record Scale(boolean byClass) implements PaintScale {
            @Override
            public double getLowerBound() {
                return byClass ? -0.5 : 0;
            }

            @Override
            public double getUpperBound() {
                return byClass ? COLORS.length - 0.5 : 100;
            }

            @Override
            public Paint getPaint(double value) {
                return COLORS[byClass ? (int) Math.max(0, Math.min(COLORS.length - 1, Math.round(value)))
                    : of(value)];
            }
        }
    }

    // ---- shared with the other chart classes

    /**
     * The steps by transport, in run order: one series each, or one per transport and message size when a transport
     * stepped through several sizes ({@code udp 64B}, {@code udp 1400B}).
     */
    static Map<String, List<StepMetrics>> byTransport(List<StepMetrics> steps) {
        Map<String, java.util.Set<Integer>> sizes = new LinkedHashMap<>();
        for (StepMetrics m : steps) {
            sizes.computeIfAbsent(m.transport(), k -> new java.util.HashSet<>()).add(m.messageSize());
        }
        Map<String, List<StepMetrics>> map = new LinkedHashMap<>();
        for (StepMetrics m : steps) {
            String key = sizes.get(m.transport()).size() > 1 ? m.transport() + " " + m.messageSize() + "B"
                : m.transport();
            map.computeIfAbsent(key, k -> new ArrayList<>()).add(m);
        }
        return map;
    }

    /** A log rate axis with a tick at each step's rate. */
    static LevelAxis levelAxis(String label, List<StepMetrics> steps) {
        return new LevelAxis(label, steps.stream().map(StepMetrics::offeredRate).toList());
    }

    /** 30000 as 30k, 1000000 as 1M, 2500000 as 2.5M; a rate that is no round level to three digits (2.06M). */
    static final class RateFormat extends ChartParts.LabelFormat {
        RateFormat() {
            super(RateFormat::compact);
        }

        static String compact(double v) {
            String exact = io.lossprobe.core.plan.Units.formatRate(Math.round(v));
            if (exact.length() <= 5 || Double.isNaN(v)) {
                return exact;
            }
            double r = new java.math.BigDecimal(v).round(new java.math.MathContext(3)).doubleValue();
            String[] suffix = {"", "k", "M", "G"};
            int k = 0;
            while (k < 3 && r >= 1000) {
                r /= 1000;
                k++;
            }
            return java.math.BigDecimal.valueOf(r).round(new java.math.MathContext(3)).stripTrailingZeros()
                .toPlainString() + suffix[k];
        }
    }
}
