package io.lossprobe.aeron;

import io.lossprobe.core.transport.EchoReplies;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.wire.MessageHeader;

/**
 * Echo mode on the responder, one per flow: sends each request the flow must answer back to the requester as the
 * same header with kind ECHO, padded to the message length, on the flow's reply publication (Aeron has no return
 * path on a stream). Called only from the receive thread, so nothing is queued here: a reply the publication
 * takes is on its way, and one it cannot take is dropped.
 *
 * <p>Back pressure (and admin actions) are retried for at most {@link #RETRY_NS}, yielding the CPU in between
 * so the driver and the requester can drain; if the publication is still full the reply is dropped and the flow
 * counts as congested: until a reply gets through again, each reply gets only a few immediate attempts. So one
 * back-pressure episode stalls the receive thread once, not once per message, and memory stays the publication's
 * term buffers. Not connected, closed and max position exceeded drop at once. A dropped reply shows in the
 * accounting as reply loss; it is counted in {@link EchoReplies} (which leaves warm-ups out) and, by reason, in
 * {@link #droppedBackPressured} or {@link #droppedNotConnected}.
 */
final class EchoReplier {
    /** The longest one reply waits for a back-pressured publication before it is dropped. */
    static final long RETRY_NS = 100_000;
    /** Immediate attempts for a reply while the flow is congested (covers a term rotation's admin action). */
    private static final int CONGESTED_ATTEMPTS = 3;

    private final AeronWriter writer;
    private final EchoReplies.Flow replies;
    private boolean congested;
    private long droppedBackPressured;
    private long droppedNotConnected;

    /** @param replies the flow's replies: their tags and counts */
    EchoReplier(AeronWriter writer, EchoReplies.Flow replies) {
        this.writer = writer;
        this.replies = replies;
    }

    /** Answers one request: the same words, kind ECHO in word 0, tagged again. */
    void reply(long word0, long word1, long sequence, long sendTimeNs, long actualSendNs) {
        long echo = MessageHeader.replyOf(word0);
        long tag = replies.tag(echo, word1, sequence, sendTimeNs, actualSendNs);
        int result = writer.write(echo, word1, sequence, sendTimeNs, actualSendNs, tag);
        if (result == MessageWriter.BLOCKED) {
            if (congested) {
                for (int i = 1; i < CONGESTED_ATTEMPTS && result == MessageWriter.BLOCKED; i++) {
                    result = writer.write(echo, word1, sequence, sendTimeNs, actualSendNs, tag);
                }
            } else {
                long deadline = System.nanoTime() + RETRY_NS;
                do {
                    Thread.yield();
                    result = writer.write(echo, word1, sequence, sendTimeNs, actualSendNs, tag);
                } while (result == MessageWriter.BLOCKED && System.nanoTime() - deadline < 0);
            }
        }
        // A warm-up's reply is never counted, as its request is not: only what it taught the publication.
        boolean counted = !MessageHeader.isWarmup(word0);
        switch (result) {
            case MessageWriter.ACCEPTED -> {
                congested = false;
                replies.sent(word0);
            }
            case MessageWriter.BLOCKED -> {
                congested = true;
                replies.dropped(word0);
                droppedBackPressured += counted ? 1 : 0;
            }
            default -> { // NOT_CONNECTED, CLOSED, MAX_POSITION_EXCEEDED: says nothing of back pressure
                replies.dropped(word0);
                droppedNotConnected += counted ? 1 : 0;
            }
        }
    }

    AeronWriter writer() {
        return writer;
    }

    /** Replies dropped because the publication stayed back-pressured (or in an admin action) past the retry. */
    long droppedBackPressured() {
        return droppedBackPressured;
    }

    /** Replies dropped because the publication was not connected, closed or at its maximum position. */
    long droppedNotConnected() {
        return droppedNotConnected;
    }
}
