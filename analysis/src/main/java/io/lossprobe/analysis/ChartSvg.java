package io.lossprobe.analysis;

import java.awt.Rectangle;
import java.awt.geom.Rectangle2D;
import java.util.Locale;
import org.jfree.chart.ChartRenderingInfo;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.entity.ChartEntity;
import org.jfree.chart.entity.StandardEntityCollection;
import org.jfree.chart.entity.XYItemEntity;
import org.jfree.svg.SVGGraphics2D;
import org.jfree.svg.ViewBox;

/**
 * Draws a chart as an inline {@code <svg>} with JFreeSVG, then lays a transparent target over every data point
 * that has a tooltip, holding the tooltip as an SVG {@code <title>}: hovering a point shows its values, with no
 * script. Every id in the output is made here from [A-Za-z0-9_-] only, and every text is escaped (JFreeSVG escapes
 * the text it draws but not the ids it is given).
 */
final class ChartSvg {
    /** Hover targets are at least this many pixels across, so small markers are easy to point at. */
    private static final double MIN_TARGET_PX = 10;

    private ChartSvg() {
    }

    static String render(JFreeChart chart, int width, int height, String id) {
        String safe = Ids.safe(id);
        SVGGraphics2D g2 = new SVGGraphics2D(width, height);
        // Several SVGs share one HTML document: their clip-path ids must not collide.
        g2.setDefsKeyPrefix(safe + "-");
        ChartRenderingInfo info = new ChartRenderingInfo(new StandardEntityCollection());
        chart.draw(g2, new Rectangle(0, 0, width, height), info);
        // A viewBox so the chart scales (not crops) when the page makes it narrower.
        String svg = g2.getSVGElement(safe + "-svg", true, new ViewBox(0, 0, width, height), null, null);
        StringBuilder hover = new StringBuilder("<g class=\"hover\">");
        int targets = 0;
        for (Object o : info.getEntityCollection().getEntities()) {
            ChartEntity e = (ChartEntity) o;
            String tip = e.getToolTipText();
            if (!(e instanceof XYItemEntity) || tip == null || tip.isEmpty()) {
                continue;
            }
            Rectangle2D b = e.getArea().getBounds2D();
            double w = Math.max(MIN_TARGET_PX, b.getWidth());
            double h = Math.max(MIN_TARGET_PX, b.getHeight());
            hover.append(String.format(Locale.ROOT,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#000\" fill-opacity=\"0\">",
                b.getCenterX() - w / 2, b.getCenterY() - h / 2, w, h));
            hover.append("<title>").append(Fmt.html(tip)).append("</title></rect>");
            targets++;
        }
        if (targets == 0) {
            return svg;
        }
        int end = svg.lastIndexOf("</svg>");
        return svg.substring(0, end) + hover.append("</g>") + svg.substring(end);
    }

    /**
     * A figure of a page: {@code <figure class="chart" id=.. data-kind=.. data-counts=..>} around the chart's SVG.
     * {@code id} must be unique in the page; it is made safe here.
     */
    static String figure(ChartParts.Figure f, String id) {
        String safe = Ids.safe(id);
        return "<figure class=\"chart\" id=\"" + safe + "\" data-kind=\"" + Ids.safe(f.kind())
            + "\" data-counts=\"" + f.countAxes() + "\">\n" + render(f.chart(), f.width(), f.height(), safe)
            + "\n</figure>\n";
    }

    /** Ids for HTML and SVG elements. */
    static final class Ids {
        private Ids() {
        }

        /** {@code text} with everything but [A-Za-z0-9_-] replaced by '_': safe in an attribute and a selector. */
        static String safe(String text) {
            StringBuilder sb = new StringBuilder(text.length());
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                boolean ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
                    || c == '-';
                sb.append(ok ? c : '_');
            }
            return sb.length() == 0 ? "_" : sb.toString();
        }
    }
}
