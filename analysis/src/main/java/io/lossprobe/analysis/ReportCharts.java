package io.lossprobe.analysis;

import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.StepResult;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Paint;
import java.awt.Rectangle;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.DateAxis;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.SymbolAxis;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.block.BlockBorder;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.PaintScale;
import org.jfree.chart.renderer.xy.XYBlockRenderer;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.PaintScaleLegend;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.data.xy.DefaultXYZDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;

/**
 * The report's charts, drawn by JFreeChart and rendered to inline SVG by JFreeSVG. Each method returns one
 * {@code <svg>} element. Rates go on log axes when they span a decade or more; loss goes on a log axis only when
 * the non-zero values span two decades, with zero drawn on the axis floor (named in the axis label) because a log
 * axis has no zero.
 */
final class ReportCharts {
    static final int WIDTH = 900;
    static final int HEIGHT = 430;
    private static final Font TITLE = new Font("SansSerif", Font.BOLD, 15);
    private static final Color[] PALETTE = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
        new Color(0xff7f0e), new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f),
        new Color(0xbcbd22), new Color(0x17becf)};
    private int charts;

    /** Loss % of sent against offered rate, one line per transport. */
    String lossVsRate(List<StepMetrics> steps) {
        return perTransport("Loss against offered rate", steps, "loss % of sent", StepMetrics::lossPercent, true);
    }

    /** Achieved receive and send rates against offered rate, with the ideal line y = x. */
    String achievedVsRate(List<StepMetrics> steps) {
        XYSeriesCollection data = new XYSeriesCollection();
        XYSeries ideal = new XYSeries("offered (ideal)");
        for (StepMetrics m : steps) {
            ideal.add(m.offeredRate(), m.offeredRate());
        }
        data.addSeries(ideal);
        for (Map.Entry<String, List<StepMetrics>> e : byTransport(steps).entrySet()) {
            data.addSeries(series(e.getKey() + " received/s", e.getValue(), StepMetrics::offeredRate,
                StepMetrics::achievedRate, Double.NaN));
            data.addSeries(series(e.getKey() + " sent/s", e.getValue(), StepMetrics::offeredRate,
                StepMetrics::achievedSendRate, Double.NaN));
        }
        ValueAxis x = rateAxis("offered rate (messages/s)", steps);
        ValueAxis y = rateAxis("achieved rate (messages/s)", steps);
        XYLineAndShapeRenderer r = lines(data.getSeriesCount());
        r.setSeriesPaint(0, Color.GRAY);
        r.setSeriesStroke(0, new BasicStroke(1.2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 1f,
            new float[] {6f, 4f}, 0f));
        r.setSeriesShapesVisible(0, false);
        return svg(chart("Achieved against offered rate", new XYPlot(data, x, y, r)), WIDTH, HEIGHT);
    }

    /** Retransmits and NAKs per 1,000 messages sent against offered rate; missing counters leave no line. */
    String retransmitsVsRate(List<StepMetrics> steps) {
        XYSeriesCollection data = new XYSeriesCollection();
        for (Map.Entry<String, List<StepMetrics>> e : byTransport(steps).entrySet()) {
            XYSeries re = series(e.getKey() + " retransmits/1k", e.getValue(), StepMetrics::offeredRate,
                StepMetrics::retransmitsPer1k, Double.NaN);
            XYSeries nak = series(e.getKey() + " NAKs/1k", e.getValue(), StepMetrics::offeredRate,
                StepMetrics::naksPer1k, Double.NaN);
            if (re.getItemCount() > 0) {
                data.addSeries(re);
            }
            if (nak.getItemCount() > 0) {
                data.addSeries(nak);
            }
        }
        NumberAxis y = new NumberAxis("per 1,000 messages sent");
        y.setAutoRangeIncludesZero(true);
        XYPlot plot = new XYPlot(data, rateAxis("offered rate (messages/s)", steps), y, lines(data.getSeriesCount()));
        if (data.getSeriesCount() == 0) {
            plot.setNoDataMessage("no transport in these results reports retransmits or NAKs (raw UDP has none)");
        }
        return svg(chart("Retransmits and NAKs against offered rate", plot), WIDTH, HEIGHT);
    }

    /** Delay percentiles (p50, p90, p99, p99.9) against offered rate, per transport. */
    String delayVsRate(List<StepMetrics> steps) {
        XYSeriesCollection data = new XYSeriesCollection();
        List<Double> all = new ArrayList<>();
        Map<String, ToDoubleFunction<StepMetrics>> percentiles = new LinkedHashMap<>();
        percentiles.put("p50", StepMetrics::p50DelayMs);
        percentiles.put("p90", StepMetrics::p90DelayMs);
        percentiles.put("p99", StepMetrics::p99DelayMs);
        percentiles.put("p99.9", StepMetrics::p999DelayMs);
        for (Map.Entry<String, List<StepMetrics>> e : byTransport(steps).entrySet()) {
            for (Map.Entry<String, ToDoubleFunction<StepMetrics>> p : percentiles.entrySet()) {
                XYSeries s = series(e.getKey() + " " + p.getKey(), e.getValue(), StepMetrics::offeredRate,
                    p.getValue(), Double.NaN);
                for (int i = 0; i < s.getItemCount(); i++) {
                    all.add(s.getY(i).doubleValue());
                }
                data.addSeries(s);
            }
        }
        ValueAxis y = valueAxis("one-way delay (ms)", all, false);
        return svg(chart("Delay percentiles against offered rate",
            new XYPlot(data, rateAxis("offered rate (messages/s)", steps), y, lines(data.getSeriesCount()))),
            WIDTH, HEIGHT);
    }

    /**
     * Echo mode: round-trip percentiles against transactions per second, one point per echo step of every result
     * given (so runs at concurrency 1, 10, 100 draw the curve the RPC benchmark tables describe).
     */
    String rttVsTps(List<StepResult> echoSteps) {
        XYSeriesCollection data = new XYSeriesCollection();
        List<Double> all = new ArrayList<>();
        Map<String, List<StepResult>> byTransport = new LinkedHashMap<>();
        for (StepResult s : echoSteps) {
            byTransport.computeIfAbsent(s.transport(), k -> new ArrayList<>()).add(s);
        }
        Map<String, ToDoubleFunction<io.lossprobe.core.result.Latency>> percentiles = new LinkedHashMap<>();
        percentiles.put("mean", l -> l.meanNs());
        percentiles.put("p50", l -> l.p50Ns());
        percentiles.put("p99", l -> l.p99Ns());
        percentiles.put("p99.9", l -> l.p999Ns());
        double maxTps = 0;
        for (Map.Entry<String, List<StepResult>> e : byTransport.entrySet()) {
            for (Map.Entry<String, ToDoubleFunction<io.lossprobe.core.result.Latency>> p : percentiles.entrySet()) {
                XYSeries series = new XYSeries(e.getKey() + " " + p.getKey(), true, true);
                for (StepResult st : e.getValue()) {
                    if (st.echo().tps() > 0 && st.echo().rtt().count() > 0) {
                        double ms = p.getValue().applyAsDouble(st.echo().rtt()) / 1e6;
                        series.addOrUpdate(st.echo().tps(), ms);
                        all.add(ms);
                        maxTps = Math.max(maxTps, st.echo().tps());
                    }
                }
                data.addSeries(series);
            }
        }
        org.jfree.chart.axis.NumberAxis x = new org.jfree.chart.axis.NumberAxis("transactions per second (replies/s)");
        x.setNumberFormatOverride(new RateFormat());
        x.setRange(0, Math.max(1, maxTps * 1.05));
        return svg(chart("Round trip against TPS (echo mode)",
            new XYPlot(data, x, valueAxis("round trip (ms)", all, false), lines(data.getSeriesCount()))),
            WIDTH, HEIGHT);
    }

    /**
     * Loss % per port (rows) and level (columns) for one transport's steps. A port in trouble shows as a red row,
     * a level in trouble as a red column. Zero loss is pale green, so the map is never blank.
     */
    String heatmap(String transport, List<StepResult> steps) {
        List<String> levels = new ArrayList<>();
        List<double[]> cells = new ArrayList<>();
        int minPort = Integer.MAX_VALUE;
        int maxPort = Integer.MIN_VALUE;
        for (StepResult s : steps) {
            levels.add(s.level().toString());
            for (FlowResult f : s.flows()) {
                cells.add(new double[] {levels.size() - 1, f.port(), f.counts().lossPercent()});
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
        if (ports > 40) {
            y.setTickUnit(new NumberTickUnit(Math.ceil(ports / 24.0)));
        }
        XYBlockRenderer r = new XYBlockRenderer();
        LossPaintScale scale = new LossPaintScale();
        r.setPaintScale(scale);
        r.setBlockWidth(1.0);
        r.setBlockHeight(1.0);
        XYPlot plot = new XYPlot(data, x, y, r);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinesVisible(false);
        plot.setRangeGridlinesVisible(false);
        plot.setNoDataMessage("no per-flow results");
        JFreeChart chart = chart(transport + ": loss % by port and level", plot);
        chart.removeLegend();
        // The strip is drawn along log10(loss %), so each decade gets the same length.
        NumberAxis legendAxis = new NumberAxis("loss % (pale green = 0)");
        legendAxis.setRange(Math.log10(LossPaintScale.LOW), Math.log10(LossPaintScale.HIGH));
        legendAxis.setTickUnit(new NumberTickUnit(1, new PowerOfTenFormat(false)));
        PaintScaleLegend legend = new PaintScaleLegend(new LogPaintScale(scale), legendAxis);
        legend.setPosition(RectangleEdge.RIGHT);
        legend.setMargin(new RectangleInsets(10, 10, 10, 10));
        legend.setStripWidth(14);
        chart.addSubtitle(legend);
        int height = Math.max(300, Math.min(1400, 130 + ports * 14));
        return svg(chart, WIDTH, height);
    }

    /** One metric over time (run start), one line per transport and level. */
    String trend(String title, String yLabel, List<LoadedResult> runs, ToDoubleFunction<StepMetrics> metric,
                 boolean lossLike) {
        Map<String, XYSeries> byKey = new LinkedHashMap<>();
        List<Double> all = new ArrayList<>();
        for (LoadedResult r : runs) {
            double t = r.startedAt().toEpochMilli();
            for (StepResult s : r.run().steps()) {
                StepMetrics m = StepMetrics.of(s);
                double v = metric.applyAsDouble(m);
                if (Double.isNaN(v)) {
                    continue;
                }
                byKey.computeIfAbsent(m.transport() + " " + m.level(), k -> new XYSeries(k, true, true))
                    .addOrUpdate(t, v);
                all.add(v);
            }
        }
        ValueAxis y = valueAxis(yLabel, all, lossLike);
        if (y instanceof LogAxis log) {
            double floor = log.getLowerBound();
            for (XYSeries s : byKey.values()) {
                for (int i = 0; i < s.getItemCount(); i++) {
                    if (s.getY(i).doubleValue() <= 0) {
                        s.updateByIndex(i, floor);
                    }
                }
            }
        }
        XYSeriesCollection data = new XYSeriesCollection();
        byKey.values().forEach(data::addSeries);
        DateAxis x = new DateAxis("run started (UTC)");
        x.setTimeZone(java.util.TimeZone.getTimeZone("UTC"));
        return svg(chart(title, new XYPlot(data, x, y, lines(data.getSeriesCount()))), WIDTH, HEIGHT);
    }

    // ---- helpers

    private String perTransport(String title, List<StepMetrics> steps, String yLabel,
                                ToDoubleFunction<StepMetrics> metric, boolean lossLike) {
        List<Double> all = new ArrayList<>();
        for (StepMetrics m : steps) {
            all.add(metric.applyAsDouble(m));
        }
        ValueAxis y = valueAxis(yLabel, all, lossLike);
        double floor = y instanceof LogAxis log ? log.getLowerBound() : Double.NaN;
        XYSeriesCollection data = new XYSeriesCollection();
        for (Map.Entry<String, List<StepMetrics>> e : byTransport(steps).entrySet()) {
            data.addSeries(series(e.getKey(), e.getValue(), StepMetrics::offeredRate, metric, floor));
        }
        return svg(chart(title, new XYPlot(data, rateAxis("offered rate (messages/s)", steps), y,
            lines(data.getSeriesCount()))), WIDTH, HEIGHT);
    }

    private static Map<String, List<StepMetrics>> byTransport(List<StepMetrics> steps) {
        Map<String, List<StepMetrics>> map = new LinkedHashMap<>();
        for (StepMetrics m : steps) {
            map.computeIfAbsent(m.transport(), k -> new ArrayList<>()).add(m);
        }
        return map;
    }

    /** A series; NaN values are left out, values at or below zero are drawn at {@code floor} when it is set. */
    private static XYSeries series(String name, List<StepMetrics> steps, ToDoubleFunction<StepMetrics> x,
                                   ToDoubleFunction<StepMetrics> y, double floor) {
        XYSeries s = new XYSeries(name, true, true);
        for (StepMetrics m : steps) {
            double xv = x.applyAsDouble(m);
            double yv = y.applyAsDouble(m);
            if (Double.isNaN(xv) || Double.isNaN(yv) || xv <= 0) {
                continue;
            }
            s.addOrUpdate(xv, !Double.isNaN(floor) && yv <= floor ? floor : yv);
        }
        return s;
    }

    /** A log axis when the positive rates span at least a decade, else linear from zero. */
    private static ValueAxis rateAxis(String label, List<StepMetrics> steps) {
        double min = Double.MAX_VALUE;
        double max = 0;
        for (StepMetrics m : steps) {
            if (m.offeredRate() > 0) {
                min = Math.min(min, m.offeredRate());
                max = Math.max(max, m.offeredRate());
            }
        }
        if (max > 0 && max / min >= 10) {
            LogAxis axis = new LogAxis(label);
            axis.setBase(10);
            axis.setSmallestValue(1);
            axis.setRange(Math.pow(10, Math.floor(Math.log10(min))), Math.pow(10, Math.ceil(Math.log10(max))));
            axis.setTickUnit(new NumberTickUnit(1));
            axis.setNumberFormatOverride(new RateFormat());
            return axis;
        }
        NumberAxis axis = new NumberAxis(label);
        axis.setAutoRangeIncludesZero(true);
        axis.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
        axis.setNumberFormatOverride(new RateFormat());
        if (max > 0) {
            axis.setRange(0, max * 1.05);
        }
        return axis;
    }

    /**
     * A log axis when the positive values span two decades or more; zeros then sit on a floor a decade below the
     * smallest positive value, and the label says so. Otherwise linear from zero.
     */
    static ValueAxis valueAxis(String label, List<Double> values, boolean zerosPossible) {
        double minPos = Double.MAX_VALUE;
        double max = 0;
        boolean zeros = false;
        for (double v : values) {
            if (Double.isNaN(v)) {
                continue;
            }
            if (v > 0) {
                minPos = Math.min(minPos, v);
                max = Math.max(max, v);
            } else {
                zeros = true;
            }
        }
        if (max > 0 && max / minPos >= 100) {
            double floor = Math.pow(10, Math.floor(Math.log10(minPos)) - (zeros && zerosPossible ? 1 : 0));
            LogAxis axis = new LogAxis(zeros && zerosPossible
                ? label + " (log; 0 drawn at " + new java.text.DecimalFormat("0.#########").format(floor) + ")"
                : label + " (log)");
            axis.setBase(10);
            axis.setSmallestValue(floor);
            axis.setRange(floor, Math.pow(10, Math.ceil(Math.log10(max))));
            axis.setTickUnit(new NumberTickUnit(1));
            axis.setNumberFormatOverride(new java.text.DecimalFormat("0.#########"));
            return axis;
        }
        NumberAxis axis = new NumberAxis(label);
        axis.setAutoRangeIncludesZero(true);
        if (max == 0) {
            axis.setRange(0, 1);
        }
        return axis;
    }

    private static XYLineAndShapeRenderer lines(int series) {
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < series; i++) {
            r.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
            r.setSeriesStroke(i, new BasicStroke(2f));
        }
        return r;
    }

    private static JFreeChart chart(String title, XYPlot plot) {
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xdddddd));
        plot.setRangeGridlinePaint(new Color(0xdddddd));
        JFreeChart chart = new JFreeChart(title, TITLE, plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        if (chart.getLegend() != null) {
            chart.getLegend().setFrame(BlockBorder.NONE);
        }
        return chart;
    }

    private String svg(JFreeChart chart, int width, int height) {
        SVGGraphics2D g2 = new SVGGraphics2D(width, height);
        // Several SVGs share one HTML document: their clip-path ids must not collide.
        g2.setDefsKeyPrefix("c" + (++charts) + "-");
        chart.draw(g2, new Rectangle(0, 0, width, height));
        return g2.getSVGElement("chart" + charts);
    }

    /** Pale green for zero loss, then yellow to dark red on a log scale from 0.001 % to 100 %. */
    static final class LossPaintScale implements PaintScale {
        static final double LOW = 0.001;
        static final double HIGH = 100;
        static final Color ZERO = new Color(0xc7e9c0);

        @Override
        public double getLowerBound() {
            return 0;
        }

        @Override
        public double getUpperBound() {
            return HIGH;
        }

        @Override
        public Paint getPaint(double lossPercent) {
            if (Double.isNaN(lossPercent) || lossPercent <= 0) {
                return ZERO;
            }
            double f = (Math.log10(Math.max(LOW, Math.min(HIGH, lossPercent))) - Math.log10(LOW))
                / (Math.log10(HIGH) - Math.log10(LOW));
            // yellow (255,230,80) -> red (215,25,28) -> dark red (103,0,13)
            if (f < 0.5) {
                double g = f / 0.5;
                return new Color(255 - (int) (40 * g), 230 - (int) (205 * g), 80 - (int) (52 * g));
            }
            double g = (f - 0.5) / 0.5;
            return new Color(215 - (int) (112 * g), 25 - (int) (25 * g), 28 - (int) (15 * g));
        }
    }

    /** The same scale indexed by log10(loss %), for the legend strip. */
    private record LogPaintScale(LossPaintScale scale) implements PaintScale {
        @Override
        public double getLowerBound() {
            return Math.log10(LossPaintScale.LOW);
        }

        @Override
        public double getUpperBound() {
            return Math.log10(LossPaintScale.HIGH);
        }

        @Override
        public Paint getPaint(double log10Value) {
            return scale.getPaint(Math.pow(10, log10Value));
        }
    }

    /** Labels a log10 value with the number it stands for: -2 as 0.01. */
    private static final class PowerOfTenFormat extends java.text.NumberFormat {
        private final java.text.DecimalFormat plain = new java.text.DecimalFormat("0.#########");
        private final boolean rate;

        PowerOfTenFormat(boolean rate) {
            this.rate = rate;
        }

        @Override
        public StringBuffer format(double v, StringBuffer sb, java.text.FieldPosition pos) {
            double value = Math.pow(10, Math.rint(v * 1e6) / 1e6);
            return sb.append(rate ? io.lossprobe.core.plan.Units.formatRate(Math.round(value)) : plain.format(value));
        }

        @Override
        public StringBuffer format(long v, StringBuffer sb, java.text.FieldPosition pos) {
            return format((double) v, sb, pos);
        }

        @Override
        public Number parse(String source, java.text.ParsePosition pos) {
            return null;
        }
    }

    /** 30000 as 30k, 1000000 as 1M. */
    static final class RateFormat extends java.text.NumberFormat {
        @Override
        public StringBuffer format(double v, StringBuffer sb, java.text.FieldPosition pos) {
            return sb.append(io.lossprobe.core.plan.Units.formatRate((long) Math.round(v)));
        }

        @Override
        public StringBuffer format(long v, StringBuffer sb, java.text.FieldPosition pos) {
            return sb.append(io.lossprobe.core.plan.Units.formatRate(v));
        }

        @Override
        public Number parse(String source, java.text.ParsePosition pos) {
            return null;
        }
    }
}
