package io.lossprobe.aeron;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.logbuffer.BufferClaim;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.wire.MessageHeader;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Writes one flow's messages into its exclusive publication: {@code tryClaim} when a message fits one frame
 * (no copy), {@code offer} from a reused buffer when Aeron must fragment it. The header goes in big-endian, as
 * {@link MessageHeader} defines it (Aeron buffers default to little-endian). Padding bytes are left as the term
 * buffer holds them (zeroed by the driver): the receiver checks only the header and the length.
 *
 * <p>Publication results map to the send loop's outcomes: back pressure and admin actions are
 * {@link #BLOCKED} (nothing consumed, the flow falls {@code behind}); not connected, closed and max position
 * exceeded are {@link #REFUSED} ({@code sendFailed}). Episodes are counted, not retries: a run of BLOCKED
 * results counts once. Used only from the sending thread; the counts are read after sending ends.
 */
final class AeronWriter implements MessageWriter {
    private final ExclusivePublication publication;
    private final int length;
    private final boolean claimable;
    private final BufferClaim claim = new BufferClaim();
    private final UnsafeBuffer offerBuffer;

    private boolean backPressured;
    private long accepted;
    private long backPressureEpisodes;
    private long adminActions;
    private long notConnected;
    private long closedOrMaxPosition;

    AeronWriter(ExclusivePublication publication, int length) {
        this.publication = publication;
        this.length = length;
        this.claimable = length <= publication.maxPayloadLength();
        this.offerBuffer = claimable ? null : new UnsafeBuffer(new byte[length]);
        if (length > publication.maxMessageLength()) {
            throw new IllegalArgumentException("message size " + length + " is above Aeron's maximum message length "
                + publication.maxMessageLength() + " for this term length (term length / 8); raise aeron.termLength");
        }
    }

    @Override
    public int write(long word0, long word1, long sequence, long intendedNs, long actualNs, long tag) {
        long result;
        // The header's length: the plan's size, or with a size mix this message's (at most the writer's length).
        int messageLength = MessageHeader.length(word1);
        if (claimable) {
            result = publication.tryClaim(messageLength, claim);
            if (result > 0) {
                AgronaHeaders.put(claim.buffer(), claim.offset(), word0, word1, sequence, intendedNs, actualNs, tag);
                claim.commit();
            }
        } else {
            AgronaHeaders.put(offerBuffer, 0, word0, word1, sequence, intendedNs, actualNs, tag);
            result = publication.offer(offerBuffer, 0, messageLength);
        }
        if (result > 0) {
            backPressured = false;
            accepted++;
            return ACCEPTED;
        }
        return notAccepted(result);
    }

    private int notAccepted(long result) {
        if (result == Publication.BACK_PRESSURED) {
            if (!backPressured) {
                backPressured = true;
                backPressureEpisodes++;
            }
            return BLOCKED;
        }
        if (result == Publication.ADMIN_ACTION) {
            adminActions++;
            return BLOCKED;
        }
        backPressured = false;
        if (result == Publication.NOT_CONNECTED) {
            notConnected++;
        } else {
            closedOrMaxPosition++; // CLOSED, MAX_POSITION_EXCEEDED
        }
        return REFUSED;
    }

    /** Aeron's sender driver sends on its own; a frame is on its way once committed. */
    @Override
    public void flush() {
    }

    ExclusivePublication publication() {
        return publication;
    }

    /** Messages the publication took, warm-up included: the same span as the driver's datagram count. */
    long accepted() {
        return accepted;
    }

    long backPressureEpisodes() {
        return backPressureEpisodes;
    }

    long adminActions() {
        return adminActions;
    }

    long notConnected() {
        return notConnected;
    }

    long closedOrMaxPosition() {
        return closedOrMaxPosition;
    }
}
