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

    /**
     * Text for XML 1.0 (an element or an attribute): escaped as for HTML, and every character XML 1.0 does not
     * allow (controls but tab, line feed and carriage return; lone surrogates; U+FFFE, U+FFFF) replaced by U+FFFD,
     * so a control character in a transport name or message from a file cannot make the document unreadable.
     */
    static String xml(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            int n = Character.charCount(cp);
            boolean allowed = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF)
                || (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
            if (allowed) {
                sb.appendCodePoint(cp);
            } else {
                sb.append('\uFFFD');
            }
            i += n;
        }
        return html(sb.toString());
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

    /**
     * Text inside a Markdown table cell, heading or list item: {@code |} and backticks escaped, line breaks (and
     * other control characters) turned to spaces, {@code <} and {@code >} as entities, so a host name, transport or
     * error text from a file stays in its cell and cannot start a row, a heading or a code span.
     */
    static String markdown(String text) {
        StringBuilder sb = new StringBuilder(text.length() + 8);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '|' -> sb.append("\\|");
                case '`' -> sb.append("\\`");
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                default -> sb.append(Character.isISOControl(c) ? ' ' : c);
            }
        }
        return sb.toString();
    }

    /** A plain number (a negative one too), which a spreadsheet must go on reading as a number. */
    private static final java.util.regex.Pattern NUMBER =
        java.util.regex.Pattern.compile("[-+]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?");

    /**
     * One CSV cell. A cell a spreadsheet would run as a formula (starting with {@code =}, {@code +}, {@code -},
     * {@code @}, a tab or a carriage return: a host name or an error text from a file is anyone's) is prefixed
     * with {@code '}, unless it is a plain number (a negative loss delta stays a number) or {@link #NO_DELAY}; a
     * cell with a comma, quote, line feed or carriage return is quoted.
     */
    static String csv(String text) {
        String cell = text;
        if (!cell.isEmpty() && "=+-@\t\r".indexOf(cell.charAt(0)) >= 0 && !cell.equals(NO_DELAY)
            && !NUMBER.matcher(cell).matches()) {
            cell = "'" + cell;
        }
        if (cell.indexOf(',') < 0 && cell.indexOf('"') < 0 && cell.indexOf('\n') < 0 && cell.indexOf('\r') < 0) {
            return cell;
        }
        return '"' + cell.replace("\"", "\"\"") + '"';
    }
}
