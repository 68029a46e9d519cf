package io.lossprobe.analysis;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Stroke;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.block.BlockBorder;
import org.jfree.chart.plot.Plot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.RangeType;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** What every chart of the report is built from: line series with tooltips, axes, the common look. */
final class ChartParts {
    static final Font TITLE = new Font("SansSerif", Font.BOLD, 15);
    static final Font NOTE = new Font("SansSerif", Font.PLAIN, 12);
    static final Stroke LINE = new BasicStroke(2.2f);

    private ChartParts() {
    }

    /**
     * A chart's figure: its id in the page (made safe by {@link ChartSvg}), what kind of chart it is, and whether
     * its value axis counts something (and so must never go below zero).
     */
    record Figure(String id, String kind, JFreeChart chart, int width, int height, boolean countAxes) {
    }

    /**
     * Line series built point by point, each point with its tooltip, each series with its own colour and stroke;
     * empty series are left out of the chart (and its legend).
     */
    static final class Lines {
        private final List<String> keys = new ArrayList<>();
        private final List<Color> colors = new ArrayList<>();
        private final List<Stroke> strokes = new ArrayList<>();
        private final List<Boolean> lines = new ArrayList<>();
        private final List<java.awt.Shape> shapes = new ArrayList<>();
        private final List<List<Point>> points = new ArrayList<>();

        private record Point(double x, double y, String tip) {
        }

        /** A new series; returns its handle for {@link #add}. */
        int series(String key, Color color, Stroke stroke, boolean line) {
            keys.add(key);
            colors.add(color);
            strokes.add(stroke);
            lines.add(line);
            shapes.add(null);
            points.add(new ArrayList<>());
            return keys.size() - 1;
        }

        /** The marker of {@code series} (default: JFreeChart's sequence of shapes). */
        void shape(int series, java.awt.Shape shape) {
            shapes.set(series, shape);
        }

        /** A point; NaN values and x at or below zero (a log axis has no place for them) are left out. */
        void add(int series, double x, double y, String tip) {
            if (!Double.isNaN(x) && !Double.isNaN(y) && !Double.isInfinite(y) && x > 0) {
                points.get(series).add(new Point(x, y, tip));
            }
        }

        List<Double> yValues() {
            List<Double> all = new ArrayList<>();
            points.forEach(ps -> ps.forEach(p -> all.add(p.y)));
            return all;
        }

        boolean isEmpty() {
            return points.stream().allMatch(List::isEmpty);
        }

        /** The colours of the series that have points, in order (what the chart will draw). */
        List<Color> drawnColors() {
            List<Color> out = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                if (!points.get(i).isEmpty()) {
                    out.add(colors.get(i));
                }
            }
            return out;
        }

        /**
         * Puts the series on {@code plot} as dataset {@code index}; values at or below {@code floor} are drawn at the
         * floor (a log axis has no zero) while their tooltips keep the true value.
         */
        void addTo(XYPlot plot, int index, double floor) {
            XYSeriesCollection data = new XYSeriesCollection();
            XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, true);
            List<List<String>> tips = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                List<Point> ps = new ArrayList<>(points.get(i));
                if (ps.isEmpty()) {
                    continue;
                }
                ps.sort(Comparator.comparingDouble(Point::x));
                XYSeries s = new XYSeries(keys.get(i), false, true);
                List<String> t = new ArrayList<>();
                for (Point p : ps) {
                    s.add(p.x, !Double.isNaN(floor) && p.y <= floor ? floor : p.y);
                    t.add(p.tip);
                }
                int n = data.getSeriesCount();
                data.addSeries(s);
                tips.add(t);
                r.setSeriesPaint(n, colors.get(i));
                r.setSeriesStroke(n, strokes.get(i));
                r.setSeriesLinesVisible(n, lines.get(i));
                if (shapes.get(i) != null) {
                    r.setSeriesShape(n, shapes.get(i));
                }
            }
            r.setDefaultToolTipGenerator((ds, s, item) -> tips.get(s).get(item));
            plot.setDataset(index, data);
            plot.setRenderer(index, r);
        }
    }

    /** A plot with the report's look: white, light grid. */
    static XYPlot plot(ValueAxis x, ValueAxis y) {
        XYPlot plot = new XYPlot(null, x, y, null);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Palette.GRID);
        plot.setRangeGridlinePaint(Palette.GRID);
        return plot;
    }

    static JFreeChart chart(String title, Plot plot, boolean legend) {
        JFreeChart chart = new JFreeChart(title, TITLE, plot, legend);
        chart.setBackgroundPaint(Color.WHITE);
        // Room on the right for the last tick label of the x axis, which is centred on the plot's edge.
        chart.setPadding(new org.jfree.chart.ui.RectangleInsets(4, 4, 4, 24));
        if (chart.getLegend() != null) {
            chart.getLegend().setFrame(BlockBorder.NONE);
        }
        return chart;
    }

    /** A line of text under the title. */
    static void note(JFreeChart chart, String text) {
        TextTitle t = new TextTitle(text, NOTE);
        t.setPaint(new Color(0x555555));
        chart.addSubtitle(t);
    }

    /**
     * A value axis: logarithmic when the positive values span two decades or more, with zeros (when
     * {@code zerosPossible}) on a floor a decade below the smallest positive value, named in the label. Otherwise
     * linear; a {@code count} axis has no tick below zero (when every value is zero it runs 0 to 1).
     */
    static ValueAxis valueAxis(String label, List<Double> values, boolean zerosPossible, boolean count) {
        double minPos = Double.MAX_VALUE;
        double max = 0;
        boolean zeros = false;
        boolean negative = false;
        for (double v : values) {
            if (Double.isNaN(v)) {
                continue;
            }
            if (v > 0) {
                minPos = Math.min(minPos, v);
                max = Math.max(max, v);
            } else {
                zeros = true;
                negative |= v < 0;
            }
        }
        if (!negative && max > 0 && max / minPos >= 100 && (!zeros || zerosPossible)) {
            double floor = Math.pow(10, Math.floor(Math.log10(minPos)) - (zeros ? 1 : 0));
            LogAxis axis = new LogAxis(zeros
                ? label + " (log; zero at the bottom)" : label + " (log)");
            axis.setBase(10);
            axis.setSmallestValue(floor / 2);
            // A little below the floor, so points drawn on it stand clear of the axis line.
            axis.setRange(floor / 1.4, Math.pow(10, Math.ceil(Math.log10(max) + 1e-9)) * 1.1);
            axis.setTickUnit(new NumberTickUnit(1));
            axis.setNumberFormatOverride(new FloorFormat(zeros ? floor : Double.NaN));
            axis.setMinorTickMarksVisible(false);
            return axis;
        }
        NumberAxis axis = new NumberAxis(label);
        if (count || !negative) {
            axis.setRangeType(RangeType.POSITIVE);
            axis.setAutoRangeIncludesZero(true);
        }
        // A count starts at zero; the range starts a hair below it so a line of zeros is drawn whole above the
        // axis line instead of half hidden in it (no tick goes below zero: ticks fall on multiples of the step).
        if (!negative) {
            double top = max <= 0 ? 1 : max * 1.08;
            axis.setRange(-top * 0.02, top);
            // The first tick is computed as ceil(lower / step) * step: -0.0, printed "-0" by any NumberFormat.
            axis.setTickUnit(new NumberTickUnit(niceStep(top / 7), new LabelFormat(v -> plain(v == 0 ? 0 : v))));
        }
        return axis;
    }

    /** The smallest of 1, 2, 5 x 10^k at or above {@code v}: a tick step people read at a glance. */
    static double niceStep(double v) {
        double decade = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 5, 10}) {
            if (m * decade >= v * 0.999) {
                return m * decade;
            }
        }
        return 10 * decade;
    }

    /** The floor {@link #valueAxis} draws zeros at, or NaN for a linear axis. */
    static double floor(ValueAxis axis) {
        return axis instanceof LogAxis log && log.getNumberFormatOverride() instanceof FloorFormat f ? f.floor
            : Double.NaN;
    }

    /** Plain decimals, and "0" for the floor a log axis draws zeros at. */
    private static final class FloorFormat extends LabelFormat {
        private final double floor;

        FloorFormat(double floor) {
            super(v -> !Double.isNaN(floor) && Math.abs(v / floor - 1) < 1e-6 ? "0" : plain(v));
            this.floor = floor;
        }
    }

    /** Tick labels from a function: an axis takes a NumberFormat, the report needs only format(double). */
    static class LabelFormat extends java.text.NumberFormat {
        private final java.util.function.DoubleFunction<String> label;

        LabelFormat(java.util.function.DoubleFunction<String> label) {
            this.label = label;
        }

        @Override
        public StringBuffer format(double v, StringBuffer sb, java.text.FieldPosition pos) {
            return sb.append(label.apply(v));
        }

        @Override
        public StringBuffer format(long v, StringBuffer sb, java.text.FieldPosition pos) {
            return sb.append(label.apply(v));
        }

        @Override
        public Number parse(String source, java.text.ParsePosition pos) {
            return null;
        }
    }
    /** A copy of {@code axis} (a plot owns its axes; small multiples need one each with the same range). */
    static ValueAxis copy(ValueAxis axis) {
        try {
            return (ValueAxis) axis.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
    }

    static String plain(double v) {
        return new java.text.DecimalFormat("0.#########", java.text.DecimalFormatSymbols.getInstance(Locale.ROOT))
            .format(v);
    }

    /** {@code text} cut to {@code max} characters with an ellipsis: labels drawn in a plot must fit it. */
    static String shorten(String text, int max) {
        return text.length() <= max ? text : text.substring(0, max - 1) + "\u2026";
    }

    /** Two significant digits, no exponent: 0.0017, 0.35, 25. */
    static String sig2(double v) {
        if (v == 0 || Double.isNaN(v)) {
            return Double.isNaN(v) ? "-" : "0";
        }
        int digits = Math.max(0, 1 - (int) Math.floor(Math.log10(Math.abs(v))));
        return String.format(Locale.ROOT, "%." + digits + "f", v);
    }

    /** A delay in ms for tooltips and notes: 0.42 ms, 12.3 ms, 1.20 s. */
    static String ms(double ms) {
        if (Double.isNaN(ms)) {
            return "-";
        }
        if (Math.abs(ms) >= 1000) {
            return String.format(Locale.ROOT, "%.2f s", ms / 1000);
        }
        return String.format(Locale.ROOT, Math.abs(ms) >= 10 ? "%.1f ms" : "%.3f ms", ms);
    }

    /** A rate for tooltips: 99,961/s. */
    static String rate(double perSecond) {
        return Double.isNaN(perSecond) ? "-" : String.format(Locale.ROOT, "%,.0f/s", perSecond);
    }
}
