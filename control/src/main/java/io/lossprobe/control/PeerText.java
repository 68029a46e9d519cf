package io.lossprobe.control;

/**
 * Text that came from the other end of a control connection, made safe to print or log: control characters
 * (escape sequences, carriage returns, newlines) and invisible formatting characters (bidirectional overrides)
 * become '?', and the length is bounded, so a peer can neither drive the terminal nor forge log lines.
 */
public final class PeerText {
    /** Longest peer text printed or logged, in characters. */
    public static final int MAX_CHARS = 1000;

    private PeerText() {
    }

    /** {@code text} with every control or format character replaced and at most {@link #MAX_CHARS} characters. */
    public static String clean(String text) {
        if (text == null) {
            return "";
        }
        int limit = Math.min(text.length(), MAX_CHARS);
        StringBuilder out = new StringBuilder(limit + 3);
        for (int i = 0; i < limit; i++) {
            char c = text.charAt(i);
            int type = Character.getType(c);
            boolean unsafe = Character.isISOControl(c) || type == Character.FORMAT || type == Character.SURROGATE
                || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR
                || type == Character.PRIVATE_USE || type == Character.UNASSIGNED;
            out.append(unsafe ? '?' : c);
        }
        if (text.length() > limit) {
            out.append("...");
        }
        return out.toString();
    }
}
