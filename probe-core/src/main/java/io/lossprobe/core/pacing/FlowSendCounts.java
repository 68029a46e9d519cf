package io.lossprobe.core.pacing;

/**
 * What the sender ({@link SendLoop}) did for one flow in the window. {@code behind = scheduled - sent - sendFailed};
 * the wire sequences of the window were {@code [0, sent + failed)} with the failed ranges skipped.
 */
public record FlowSendCounts(long scheduled, long sent, long sendFailed, long behind) {
}
