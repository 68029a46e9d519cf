package io.lossprobe.core.transport;

/**
 * How the send loop hands one flow's messages to a transport. Called only from the thread that runs the
 * send loop (pacing/SendLoop, above this package); must not allocate per call where it can be avoided.
 *
 * <p>Sequence numbers are dense: the send loop gives an {@link #ACCEPTED} message the next wire sequence number
 * and a {@link #REFUSED} one none, so the wire sequences of a step are exactly {@code [0, sent + failed)}. A message
 * accepted here that later fails to leave is reported through the {@link SendFailureListener} of the writer's
 * {@link SenderSpec}.
 */
public interface MessageWriter {
    /** The transport took the message (sent, or queued within its bounded buffer). */
    int ACCEPTED = 0;
    /** The local stack refused the message (ENOBUFS, EAGAIN, back pressure past the retry budget): sendFailed. */
    int REFUSED = 1;
    /** The transport cannot take a message now (not writable); nothing was consumed, try again later. */
    int BLOCKED = 2;

    /**
     * Writes one message: the six 64-bit header words (see {@link io.lossprobe.core.wire.MessageHeader}),
     * big-endian, then padding up to the message length, which is the one in {@code word1} (the plan's size, or
     * with a size mix this message's, never above the plan's). The tag is computed by the send loop; a transport
     * only copies the words.
     *
     * @param intendedNs the schedule's send time
     * @param actualNs   when the send loop handed the message over
     * @return {@link #ACCEPTED}, {@link #REFUSED} or {@link #BLOCKED}
     */
    int write(long word0, long word1, long sequence, long intendedNs, long actualNs, long tag);

    /** Pushes what was written since the last flush to the network (one sendmmsg, one write, ...). */
    void flush();
}
