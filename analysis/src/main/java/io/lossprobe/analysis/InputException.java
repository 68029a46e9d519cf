package io.lossprobe.analysis;

/**
 * Input that cannot be used: an unreadable, malformed or too-new result file, or a bad policy. The message is one
 * line fit for the command line (which exits 2 on it).
 */
public final class InputException extends Exception {
    public InputException(String message) {
        super(message);
    }
}
