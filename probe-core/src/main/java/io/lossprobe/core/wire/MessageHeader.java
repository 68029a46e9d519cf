package io.lossprobe.core.wire;

/**
 * The 48-byte header at the front of every lossprobe message, encoded as six big-endian 64-bit words so
 * any transport can read and write it with six {@code getLong}/{@code putLong} calls and no allocation.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                        magic 'LPRB'                           |  word 0
 *  |    version    |     kind      |            flow id            |
 *  +---------------------------------------------------------------+
 *  |                            run id                             |  word 1
 *  |             step              |        message length         |
 *  +---------------------------------------------------------------+
 *  |                   sequence number (64 bits)                   |  word 2
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |        intended send time, ns on the sender's clock           |  word 3
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |        actual send time: when it was handed to the transport  |  word 4
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |        tag: SipHash-2-4 of words 0-4 under the run's key       |  word 5
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |               padding up to the message length               ...
 * </pre>
 *
 * The message length is the whole message including this header; it lets a receiver reject truncated
 * datagrams and lets a stream reader frame messages. The intended send time is the pacing schedule's time,
 * not the moment the bytes left, so delays include the sender falling behind (no coordinated omission); the actual
 * send time is when the send loop handed it over, so the transit alone can be told apart. The tag
 * ({@link MessageAuth}) makes a message that was not sent by this run's sender count as foreign, never received.
 */
public final class MessageHeader {
    public static final int LENGTH = 48;
    public static final int MAGIC = 0x4C505242; // "LPRB"
    /** 2: the actual send time and the tag (version 1 had four words). */
    public static final int VERSION = 2;
    public static final int MAX_MESSAGE_LENGTH = 0xFFFF;

    public static final int WORD0_OFFSET = 0;
    public static final int WORD1_OFFSET = 8;
    public static final int SEQUENCE_OFFSET = 16;
    public static final int SEND_TIME_OFFSET = 24;
    public static final int ACTUAL_SEND_TIME_OFFSET = 32;
    public static final int TAG_OFFSET = 40;

    /** A measured message: counted by the sequence tracker. */
    public static final int KIND_DATA = 1;
    /** A warm-up message: accepted and ignored. */
    public static final int KIND_WARMUP = 2;
    /** A reply in echo mode: a data message sent back unchanged but for this kind. */
    public static final int KIND_ECHO = 3;

    /** The reply's first word for a request's first word: the same message, kind {@link #KIND_ECHO}. */
    public static long echoOf(long word0) {
        return (word0 & ~(0xFFL << 16)) | ((long) KIND_ECHO << 16);
    }

    /**
     * The first word of the answer to a request in echo mode: a data request is answered with kind
     * {@link #KIND_ECHO} (counted by the requester), a warm-up request with its own kind {@link #KIND_WARMUP}
     * (accepted and ignored there, like any warm-up), so the reply path runs during the warm-up.
     */
    public static long replyOf(long word0) {
        return isWarmup(word0) ? word0 : echoOf(word0);
    }

    /**
     * Whether a message (or the request a reply answers) is a warm-up: never counted anywhere, neither its
     * arrival nor its reply, sent or dropped.
     */
    public static boolean isWarmup(long word0) {
        return kind(word0) == KIND_WARMUP;
    }

    private MessageHeader() {
    }

    public static long word0(int kind, int flowId) {
        return ((long) MAGIC << 32) | ((long) (VERSION & 0xFF) << 24) | ((long) (kind & 0xFF) << 16)
                | (flowId & 0xFFFF);
    }

    public static long word1(int runId, int step, int length) {
        return ((long) runId << 32) | ((long) (step & 0xFFFF) << 16) | (length & 0xFFFF);
    }

    public static int magic(long word0) {
        return (int) (word0 >>> 32);
    }

    public static int version(long word0) {
        return (int) (word0 >>> 24) & 0xFF;
    }

    public static int kind(long word0) {
        return (int) (word0 >>> 16) & 0xFF;
    }

    public static int flowId(long word0) {
        return (int) word0 & 0xFFFF;
    }

    public static int runId(long word1) {
        return (int) (word1 >>> 32);
    }

    public static int step(long word1) {
        return (int) (word1 >>> 16) & 0xFFFF;
    }

    public static int length(long word1) {
        return (int) word1 & 0xFFFF;
    }

    /** True when magic and version are ours; flow, run, step and length are checked by the receiver. */
    public static boolean isLossprobe(long word0) {
        return magic(word0) == MAGIC && version(word0) == VERSION;
    }
}
