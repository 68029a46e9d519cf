package io.lossprobe.analysis;

import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.geom.Rectangle2D;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.jfree.chart.axis.AxisState;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTick;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.ValueTick;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.TextAnchor;

/**
 * A logarithmic rate axis with a tick at every level the run stepped through (30k, 100k, 1M), labelled as the levels
 * are typed, instead of one per decade: the reader finds each measured rate on the axis. Labels that would touch the
 * one before are left out (the tick stays).
 */
final class LevelAxis extends LogAxis {
    private final List<Double> ticks;

    LevelAxis(String label, List<Double> tickValues) {
        super(label);
        this.ticks = List.copyOf(new TreeSet<>(tickValues.stream().filter(v -> v > 0).toList()));
        setBase(10);
        setSmallestValue(ticks.isEmpty() ? 1 : ticks.get(0) / 2);
        setTickUnit(new NumberTickUnit(1));
        setNumberFormatOverride(new ReportCharts.RateFormat());
        setMinorTickMarksVisible(false);
        if (!ticks.isEmpty()) {
            double lo = ticks.get(0);
            double hi = ticks.get(ticks.size() - 1);
            // A margin each side keeps the end points and their labels inside the plot: 6 % of the span, a fifth
            // of a decade around a single level.
            double span = Math.log10(hi / lo);
            double margin = Math.pow(10, span > 0 ? Math.max(0.01, 0.06 * span) : 0.2);
            setRange(lo / margin, hi * margin);
        }
    }

    @Override
    public List refreshTicks(Graphics2D g2, AxisState state, Rectangle2D dataArea, RectangleEdge edge) {
        if (ticks.isEmpty()) {
            return super.refreshTicks(g2, state, dataArea, edge);
        }
        boolean horizontal = RectangleEdge.isTopOrBottom(edge);
        Font font = getTickLabelFont();
        FontMetrics fm = g2.getFontMetrics(font);
        List<ValueTick> out = new ArrayList<>();
        double lastEnd = Double.NEGATIVE_INFINITY;
        for (double v : ticks) {
            String label = getNumberFormatOverride().format(v);
            double at = valueToJava2D(v, dataArea, edge);
            double half = horizontal ? fm.stringWidth(label) / 2.0 + 3 : fm.getHeight() / 2.0 + 1;
            double pos = horizontal ? at : -at;
            boolean fits = pos - half > lastEnd;
            if (fits) {
                lastEnd = pos + half;
            }
            out.add(horizontal
                ? new NumberTick(v, fits ? label : "", TextAnchor.TOP_CENTER, TextAnchor.CENTER, 0)
                : new NumberTick(v, fits ? label : "", TextAnchor.CENTER_RIGHT, TextAnchor.CENTER, 0));
        }
        return out;
    }
}
