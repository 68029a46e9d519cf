package io.lossprobe.analysis;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Stroke;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Colours and strokes of every chart, so a transport has one colour throughout a report. Series are told apart by
 * colour by transport, then by shade and dash by percentile (p50 darkest and solid, p99.9 lightest and dotted): no
 * two series of one chart share a colour. Levels get a sequential ramp (light = low rate, dark = high).
 */
final class Palette {
    /** The known transports' colours (Tableau 10), then the rest of it for others in order of appearance. */
    private static final Map<String, Color> KNOWN = Map.of("udp", new Color(0x1f77b4), "tcp", new Color(0xff7f0e),
        "aeron", new Color(0x2ca02c));
    private static final List<Color> OTHERS = List.of(new Color(0x9467bd), new Color(0x8c564b),
        new Color(0xe377c2), new Color(0x17becf), new Color(0xbcbd22), new Color(0xd62728), new Color(0x7f7f7f));
    /** Viridis from 0.05 to 0.8 (its yellow end is unreadable on white). */
    private static final Color[] RAMP = {new Color(0x471365), new Color(0x443983), new Color(0x3b528b),
        new Color(0x2f6c8e), new Color(0x25848e), new Color(0x1f9e89), new Color(0x35b779), new Color(0x6ccd5a)};
    static final List<String> PERCENTILES = List.of("p50", "p90", "p99", "p99.9");
    static final Color FAIL = new Color(0xd62728);
    static final Color GRID = new Color(0xdddddd);

    private final Map<String, Color> transports = new LinkedHashMap<>();

    /** The colour of {@code transport}: fixed for udp, tcp, aeron; the next unused one for any other. */
    Color transport(String transport) {
        Color known = KNOWN.get(transport);
        if (known != null) {
            return known;
        }
        return transports.computeIfAbsent(transport, t -> {
            int used = transports.size();
            return used < OTHERS.size() ? OTHERS.get(used) : Color.getHSBColor((used * 0.618f) % 1f, 0.7f, 0.75f);
        });
    }

    /**
     * Shade {@code index} of {@code of} for percentile series (0 = p50, 3 = p99.9): darker first, then lighter, so
     * p50 stands out and each percentile keeps its own colour.
     */
    static Color shade(Color of, int index) {
        return switch (index) {
            case 0 -> mix(of, Color.BLACK, 0.30);
            case 1 -> of;
            case 2 -> mix(of, Color.WHITE, 0.35);
            default -> mix(of, Color.WHITE, 0.60);
        };
    }

    /** A translucent fill of {@code of} for a band between two percentiles (0 = p50-p90, darkest). */
    static Color band(Color of, int index) {
        Color c = mix(of, Color.WHITE, 0.15 + 0.25 * index);
        return new Color(c.getRed(), c.getGreen(), c.getBlue(), 150);
    }

    /** Dash per percentile index: solid, long dash, dash, dots. */
    static Stroke dash(int index, float width) {
        float[][] dashes = {null, {9f, 4f}, {5f, 4f}, {1.5f, 3f}};
        float[] d = dashes[Math.min(index, dashes.length - 1)];
        return d == null ? new BasicStroke(width) : new BasicStroke(width, BasicStroke.CAP_BUTT,
            BasicStroke.JOIN_MITER, 1f, d, 0f);
    }

    /** Colour {@code i} of {@code n} ordered things (levels): light to dark. */
    static Color rampOf(int i, int n) {
        if (n <= 1) {
            return RAMP[2];
        }
        double pos = (RAMP.length - 1) * (1.0 - (double) i / (n - 1));
        int lo = (int) Math.floor(pos);
        int hi = Math.min(RAMP.length - 1, lo + 1);
        return mix(RAMP[lo], RAMP[hi], pos - lo);
    }

    static Color mix(Color a, Color b, double towardsB) {
        return new Color((int) Math.round(a.getRed() + (b.getRed() - a.getRed()) * towardsB),
            (int) Math.round(a.getGreen() + (b.getGreen() - a.getGreen()) * towardsB),
            (int) Math.round(a.getBlue() + (b.getBlue() - a.getBlue()) * towardsB));
    }

    static String hex(Color c) {
        return String.format("#%06x", c.getRGB() & 0xffffff);
    }
}
