package io.lossprobe.analysis;

import java.util.Locale;

/** Number formatting shared by the table formats: fixed decimals, "" for values that do not apply (NaN). */
final class Fmt {
    /** Printed for a delay figure of a step that recorded none (an empty histogram has no percentiles). */
    static final String NO_DELAY = "-";

    private Fmt() {
    }

    static String num(double v, int decimals) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "";
        }
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    /** A delay in ms, or {@link #NO_DELAY} when the step recorded none (NaN). */
    static String delayMs(double ms, int decimals) {
        return Double.isNaN(ms) ? NO_DELAY : num(ms, decimals);
    }

    static String html(String text) {
        StringBuilder sb = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '&' -> sb.append("&amp;");
                case '"' -> sb.append("&quot;");
                case '\'' -> sb.append("&#39;");
                default -> sb.append(c);
            }
        }
        return sb.toString();
    }

    static String csv(String text) {
        if (text.indexOf(',') < 0 && text.indexOf('"') < 0 && text.indexOf('\n') < 0) {
            return text;
        }
        return '"' + text.replace("\"", "\"\"") + '"';
    }
}
