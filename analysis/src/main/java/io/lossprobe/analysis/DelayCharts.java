package io.lossprobe.analysis;

import java.awt.BasicStroke;
import java.awt.Color;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.DeviationRenderer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.YIntervalSeries;
import org.jfree.data.xy.YIntervalSeriesCollection;

/**
 * Delay as small multiples: percentile bands against rate (or TPS) per transport, HdrHistogram-style percentile
 * distributions per step, and per-interval time series. Within a chart, each percentile has its own shade and dash
 * of the transport's colour, with translucent bands between them.
 */
final class DelayCharts {
    static final int PERCENTILE_COUNT = 4;
    private final Palette palette;

    DelayCharts(Palette palette) {
        this.palette = palette;
    }

    /**
     * The percentiles at one x.
     *
     * @param ms            p50, p90, p99, p99.9 in ms (NaN where absent)
     * @param uncertaintyMs between hosts, the clock bound every value is true to; NaN on one host
     * @param what          for tooltips: "udp 100k"
     */
    record Pct(double x, double[] ms, double uncertaintyMs, String what) {
    }

    /**
     * One set of percentiles drawn in shades of {@code color}: the percentiles listed (indexes into p50, p90, p99,
     * p99.9), with bands between consecutive ones when {@code bands}.
     */
    record PctSet(String name, Color color, List<Pct> points, int[] percentiles, boolean bands) {
    }

    /** Every value of the sets, for an axis shared by small multiples. */
    static List<Double> values(List<PctSet> sets) {
        List<Double> all = new ArrayList<>();
        for (PctSet s : sets) {
            for (Pct p : s.points()) {
                for (int i : s.percentiles()) {
                    all.add(p.ms()[i]);
                }
            }
        }
        return all;
    }

    /** A delay axis over {@code values}: logarithmic when they span two decades and none is at or below zero. */
    static ValueAxis delayAxis(String label, List<Double> values) {
        return ChartParts.valueAxis(label, values, false, false);
    }

    /** Percentile lines and bands of {@code sets} on {@code x} and {@code y}. */
    ChartParts.Figure bands(String id, String kind, String title, ValueAxis x, ValueAxis y, List<PctSet> sets,
                            int width, int height) {
        XYPlot plot = ChartParts.plot(x, y);
        ChartParts.Lines lines = new ChartParts.Lines();
        YIntervalSeriesCollection bandData = new YIntervalSeriesCollection();
        DeviationRenderer bandRenderer = new DeviationRenderer(false, false);
        bandRenderer.setAlpha(0.45f);
        double uncertainty = Double.NaN;
        for (PctSet set : sets) {
            int[] ps = set.percentiles();
            int[] handles = new int[ps.length];
            for (int k = 0; k < ps.length; k++) {
                String pname = Palette.PERCENTILES.get(ps[k]);
                handles[k] = lines.series(set.name() + " " + pname, Palette.shade(set.color(), ps[k]),
                    Palette.dash(ps[k], ps[k] == 0 ? 2.4f : 1.8f), true);
            }
            for (Pct p : set.points()) {
                for (int k = 0; k < ps.length; k++) {
                    lines.add(handles[k], p.x(), p.ms()[ps[k]], pctTip(set, p, ps[k]));
                }
                if (!Double.isNaN(p.uncertaintyMs())) {
                    uncertainty = Double.isNaN(uncertainty) ? p.uncertaintyMs()
                        : Math.max(uncertainty, p.uncertaintyMs());
                }
            }
            if (set.bands()) {
                for (int k = 0; k + 1 < ps.length; k++) {
                    YIntervalSeries band = new YIntervalSeries(set.name() + " " + Palette.PERCENTILES.get(ps[k])
                        + "-" + Palette.PERCENTILES.get(ps[k + 1]));
                    for (Pct p : set.points()) {
                        double lo = p.ms()[ps[k]];
                        double hi = p.ms()[ps[k + 1]];
                        if (!Double.isNaN(lo) && !Double.isNaN(hi) && p.x() > 0) {
                            band.add(p.x(), lo, lo, hi);
                        }
                    }
                    addBand(bandData, bandRenderer, band, Palette.band(set.color(), k));
                }
                YIntervalSeries clock = new YIntervalSeries(set.name() + " p50 clock bound");
                for (Pct p : set.points()) {
                    double mid = p.ms()[ps[0]];
                    if (!Double.isNaN(p.uncertaintyMs()) && !Double.isNaN(mid) && p.x() > 0) {
                        // Not below the axis: on a log axis a bound wider than p50 would go below zero (NaN).
                        clock.add(p.x(), mid, Math.max(mid - p.uncertaintyMs(), y.getLowerBound()),
                            mid + p.uncertaintyMs());
                    }
                }
                addBand(bandData, bandRenderer, clock, new Color(0x888888));
            }
        }
        lines.addTo(plot, 0, ChartParts.floor(y));
        plot.setDataset(1, bandData);
        plot.setRenderer(1, bandRenderer);
        JFreeChart chart = ChartParts.chart(title, plot, true);
        if (!Double.isNaN(uncertainty)) {
            ChartParts.note(chart, "Between hosts: every value is true to +-" + ChartParts.ms(uncertainty)
                + " (the clock offset's bound, grey around p50)");
        }
        return new ChartParts.Figure(id, kind, chart, width, height, false);
    }

    private static void addBand(YIntervalSeriesCollection data, DeviationRenderer r, YIntervalSeries band,
                                Color fill) {
        if (band.getItemCount() == 0) {
            return;
        }
        int n = data.getSeriesCount();
        data.addSeries(band);
        r.setSeriesFillPaint(n, fill);
        r.setSeriesPaint(n, fill);
        r.setSeriesLinesVisible(n, false);
        r.setSeriesShapesVisible(n, false);
        r.setSeriesVisibleInLegend(n, false);
    }

    private static String pctTip(PctSet set, Pct p, int percentile) {
        String u = Double.isNaN(p.uncertaintyMs()) ? "" : " +-" + ChartParts.ms(p.uncertaintyMs()) + " (clock)";
        StringBuilder all = new StringBuilder();
        for (int i = 0; i < PERCENTILE_COUNT; i++) {
            all.append(i == 0 ? "" : ", ").append(Palette.PERCENTILES.get(i)).append(' ')
                .append(ChartParts.ms(p.ms()[i]));
        }
        return set.name() + " " + p.what() + ": " + Palette.PERCENTILES.get(percentile) + " "
            + ChartParts.ms(p.ms()[percentile]) + u + "\n" + all;
    }

    /**
     * One step's delay distribution for the percentile plot.
     *
     * @param x    1/(1-p) for each percentile p (0..1): 1 at the minimum, 10 at p90, 100 at p99
     * @param ms   the delay at each
     * @param full true when drawn from the step's HdrHistogram log, false from the summary percentiles
     */
    record Distribution(String level, double[] x, double[] ms, boolean full) {
    }

    /**
     * Delay against percentile, one line per step (level) of one transport, on HdrHistogram's axis: 1/(1-p) on a
     * log scale, so the tail from 90 % to 99.999 % gets room.
     */
    ChartParts.Figure percentiles(String id, String transport, String what, List<Distribution> steps, int width,
                                  int height) {
        ChartParts.Lines lines = new ChartParts.Lines();
        double maxX = 10;
        boolean anySummary = false;
        boolean anyFull = false;
        for (int i = 0; i < steps.size(); i++) {
            Distribution d = steps.get(i);
            int s = lines.series(d.level(), Palette.rampOf(i, steps.size()), new BasicStroke(2f), true);
            for (int k = 0; k < d.x().length; k++) {
                lines.add(s, d.x()[k], d.ms()[k], String.format(Locale.ROOT, "%s %s: %s at %s", transport,
                    d.level(), ChartParts.ms(d.ms()[k]), percentileLabel(d.x()[k])));
                maxX = Math.max(maxX, d.x()[k]);
            }
            anySummary |= !d.full();
            anyFull |= d.full();
        }
        LogAxis x = new LogAxis("percentile");
        x.setBase(10);
        x.setSmallestValue(1);
        x.setRange(1, Math.pow(10, Math.ceil(Math.log10(maxX) + 1e-9)));
        x.setTickUnit(new NumberTickUnit(1));
        x.setNumberFormatOverride(new ChartParts.LabelFormat(DelayCharts::percentileLabel));
        x.setMinorTickMarksVisible(false);
        // Linear as HdrHistogram's plotter draws it, unless the levels' delays span two decades: then a log axis
        // keeps the fast levels from lying flat on zero under the slow one.
        ValueAxis y = delayAxis(what + " (ms)", lines.yValues());
        XYPlot plot = ChartParts.plot(x, y);
        lines.addTo(plot, 0, ChartParts.floor(y));
        JFreeChart chart = ChartParts.chart(transport + ": " + what + " by percentile, per level", plot, true);
        if (anySummary) {
            ChartParts.note(chart, (anyFull ? "Some levels " : "Drawn ")
                + "from the summary (min, p50, p90, p99, p99.9, max); run with --hlog for the full curve");
        }
        return new ChartParts.Figure(id, "percentiles", chart, width, height, false);
    }

    /** 1/(1-p) as the percentile it stands for: 10 as 90%, 1000 as 99.9%. */
    static String percentileLabel(double inverseTail) {
        double p = 100.0 * (1 - 1 / inverseTail);
        if (p <= 0) {
            return "0%";
        }
        int decimals = Math.max(0, (int) Math.ceil(-Math.log10(100 - p) + 1e-9));
        return ChartParts.plain(new java.math.BigDecimal(p).setScale(decimals, java.math.RoundingMode.HALF_UP)
            .doubleValue()) + "%";
    }

    /** One step's intervals, with its level. */
    record StepIntervals(StepMetrics step, List<RunExtras.Interval> intervals) {
    }

    /**
     * Per-interval time series of one transport, steps laid end to end: rates (sent, received), loss %, and delay
     * (p50, p99), sharing the time axis, with a line where each step begins.
     */
    ChartParts.Figure intervals(String id, String transport, List<StepIntervals> steps, int width, int height) {
        Color c = palette.transport(transport);
        ChartParts.Lines rates = new ChartParts.Lines();
        // Five series share one legend: five shades of the transport's colour.
        int rx = rates.series("received/s", c, ChartParts.LINE, true);
        int tx = rates.series("sent/s", Palette.shade(c, 3), Palette.dash(1, 1.6f), true);
        ChartParts.Lines loss = new ChartParts.Lines();
        int lossSeries = loss.series("loss %", Palette.shade(c, 0), ChartParts.LINE, true);
        ChartParts.Lines delay = new ChartParts.Lines();
        int p50 = delay.series("delay p50", Palette.mix(c, Color.BLACK, 0.6), Palette.dash(0, 2f), true);
        int p99 = delay.series("delay p99", Palette.shade(c, 2), Palette.dash(2, 2f), true);
        NumberAxis time = new NumberAxis("seconds of measured window (steps end to end)");
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(time);
        List<ValueMarker> starts = new ArrayList<>();
        double offsetS = 0;
        for (StepIntervals s : steps) {
            ValueMarker m = new ValueMarker(offsetS, Color.GRAY, new BasicStroke(1f));
            m.setLabel(s.step().level());
            m.setLabelFont(ChartParts.NOTE);
            m.setLabelAnchor(RectangleAnchor.TOP_RIGHT);
            m.setLabelTextAnchor(TextAnchor.TOP_LEFT);
            starts.add(m);
            double endS = 0;
            for (RunExtras.Interval iv : s.intervals()) {
                // Plotted at the interval's middle; x must be above zero for the series.
                double at = offsetS + (iv.startNs() + iv.endNs()) / 2e9;
                String what = String.format(Locale.ROOT, "%s %s, %.2f-%.2f s: ", transport, s.step().level(),
                    iv.startNs() / 1e9, iv.endNs() / 1e9);
                rates.add(rx, at, iv.received() / iv.seconds(), what + "received " + ChartParts.rate(
                    iv.received() / iv.seconds()) + ", sent " + ChartParts.rate(iv.sent() / iv.seconds()));
                rates.add(tx, at, iv.sent() / iv.seconds(), what + "sent " + ChartParts.rate(iv.sent()
                    / iv.seconds()));
                loss.add(lossSeries, at, iv.lossPercent(), what + "loss " + ChartParts.sig2(iv.lossPercent())
                    + String.format(Locale.ROOT, " %% (%,d of %,d)", iv.lost(), iv.sent()));
                if (iv.delayNs()[0] >= 0) {
                    delay.add(p50, at, iv.delayNs()[0] / 1e6, what + "p50 " + ChartParts.ms(iv.delayNs()[0] / 1e6));
                }
                if (iv.delayNs()[2] >= 0) {
                    delay.add(p99, at, iv.delayNs()[2] / 1e6, what + "p99 " + ChartParts.ms(iv.delayNs()[2] / 1e6));
                }
                endS = Math.max(endS, iv.endNs() / 1e9);
            }
            offsetS += endS;
        }
        time.setRange(0, Math.max(offsetS, 1e-3));
        ValueAxis rateAxis = ChartParts.valueAxis("messages/s", rates.yValues(), false, true);
        if (rateAxis instanceof NumberAxis n) {
            n.setNumberFormatOverride(new ReportCharts.RateFormat());
        }
        plot.add(sub(rates, rateAxis, starts, true), 2);
        plot.add(sub(loss, ChartParts.valueAxis("loss %", loss.yValues(), true, true), starts, false), 1);
        if (!delay.isEmpty()) {
            plot.add(sub(delay, DelayCharts.delayAxis("delay (ms)", delay.yValues()), starts, false), 2);
        }
        plot.setGap(8);
        JFreeChart chart = ChartParts.chart(transport + ": per interval", plot, true);
        return new ChartParts.Figure(id, "intervals", chart, width, height, false);
    }

    /** A subplot; each needs its own marker objects, and only the top one carries the levels' labels. */
    private static XYPlot sub(ChartParts.Lines lines, ValueAxis y, List<ValueMarker> starts, boolean labelled) {
        XYPlot p = ChartParts.plot(null, y);
        lines.addTo(p, 0, ChartParts.floor(y));
        for (ValueMarker m : starts) {
            p.addDomainMarker(labelled ? m : new ValueMarker(m.getValue(), m.getPaint(), m.getStroke()));
        }
        return p;
    }
}
