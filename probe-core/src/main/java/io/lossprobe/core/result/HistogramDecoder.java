package io.lossprobe.core.result;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;
import org.HdrHistogram.Histogram;

/**
 * Decodes a histogram someone else encoded (a peer's step result, an {@code .hlog} file) without letting its header
 * choose how much memory is allocated. HdrHistogram sizes the counts array from the header's lowest and highest
 * trackable values and significant digits before it reads any count: digits 5 over 1..2^62 is a 49 MB array (and
 * up to 55 MB more for the payload) from a header of a few dozen bytes, and an {@link OutOfMemoryError} is caught
 * by nobody. So the header is inflated and read here first, every field checked against the bounds of the
 * histograms lossprobe makes ({@link Latency#newHistogram()}: 1 ns to {@link Latency#HIGHEST_TRACKABLE_NS}, 2
 * digits), and only a histogram within them reaches HdrHistogram: at most {@link #MAX_COUNTS} counts (about 280 KB).
 */
public final class HistogramDecoder {
    /** HdrHistogram's V2 cookies, the word-size nibble ({@code 0xf0}) masked off. */
    static final int V2_ENCODING_COOKIE = 0x1c849303;
    static final int V2_COMPRESSED_COOKIE = 0x1c849304;
    /** V2's widest count in bytes (zig-zag LEB128), whatever the cookie's nibble says. */
    private static final int V2_WORD_SIZE = 9;
    /** cookie, payload length, normalizing offset, digits (ints); lowest, highest (longs); ratio (double). */
    static final int HEADER_BYTES = 40;

    public static final int MIN_DIGITS = 1;
    /** lossprobe records with 2; one more is accepted, for a tool that keeps more precision. */
    public static final int MAX_DIGITS = 3;
    public static final long MAX_LOWEST = 1_000;
    public static final long MAX_HIGHEST = Latency.HIGHEST_TRACKABLE_NS;
    /** The counts array of the largest histogram the bounds admit (3 digits over 1 ns..1 h). */
    public static final int MAX_COUNTS = countsArrayLength(1, MAX_HIGHEST, MAX_DIGITS);
    /** Its payload at V2's widest count (9 bytes). */
    public static final int MAX_PAYLOAD_BYTES = MAX_COUNTS * V2_WORD_SIZE;

    private HistogramDecoder() {
    }

    /**
     * A histogram in HdrHistogram's compressed form ({@code encodeIntoCompressedByteBuffer}), read from the buffer's
     * position; its header checked before anything is allocated.
     *
     * @throws IllegalArgumentException naming the field that is not a lossprobe histogram's
     */
    public static Histogram decodeCompressed(ByteBuffer buffer) {
        ByteBuffer b = buffer.duplicate().order(ByteOrder.BIG_ENDIAN);
        if (b.remaining() < 8) {
            throw new IllegalArgumentException("histogram of " + b.remaining() + " bytes: shorter than its header");
        }
        int cookie = b.getInt(b.position());
        if ((cookie & ~0xf0) != V2_COMPRESSED_COOKIE) {
            throw new IllegalArgumentException(String.format("not a compressed HdrHistogram (cookie 0x%08x)", cookie));
        }
        int compressed = b.getInt(b.position() + 4);
        if (compressed <= 0 || compressed > b.remaining() - 8) {
            throw new IllegalArgumentException("histogram says " + compressed + " compressed bytes where "
                + (b.remaining() - 8) + " follow");
        }
        byte[] input = new byte[compressed];
        b.get(b.position() + 8, input);
        byte[] header = new byte[HEADER_BYTES];
        Inflater inflater = new Inflater();
        try {
            inflater.setInput(input);
            int got = 0;
            while (got < HEADER_BYTES && !inflater.finished() && !inflater.needsInput()) {
                int n = inflater.inflate(header, got, HEADER_BYTES - got);
                if (n == 0 && inflater.needsDictionary()) {
                    break;
                }
                got += n;
            }
            if (got < HEADER_BYTES) {
                throw new IllegalArgumentException("histogram header of " + got + " bytes, not " + HEADER_BYTES);
            }
        } catch (DataFormatException e) {
            throw new IllegalArgumentException("histogram not deflated: " + e.getMessage());
        } finally {
            inflater.end();
        }
        checkHeader(ByteBuffer.wrap(header));
        try {
            return Histogram.decodeFromCompressedByteBuffer(buffer.duplicate(), 0);
        } catch (DataFormatException e) {
            throw new IllegalArgumentException("bad histogram: " + e.getMessage());
        } catch (java.nio.BufferUnderflowException | IndexOutOfBoundsException e) {
            throw new IllegalArgumentException("bad histogram: " + e);
        }
    }

    /** The uncompressed V2 header's fields against lossprobe's bounds. */
    static void checkHeader(ByteBuffer h) {
        int cookie = h.getInt();
        if ((cookie & ~0xf0) != V2_ENCODING_COOKIE) {
            throw new IllegalArgumentException(String.format("not a V2 HdrHistogram (cookie 0x%08x)", cookie));
        }
        int payload = h.getInt();
        int normalizingOffset = h.getInt();
        int digits = h.getInt();
        long lowest = h.getLong();
        long highest = h.getLong();
        double ratio = h.getDouble();
        if (digits < MIN_DIGITS || digits > MAX_DIGITS) {
            throw new IllegalArgumentException("histogram of " + digits + " significant digits (lossprobe's have "
                + MIN_DIGITS + " to " + MAX_DIGITS + ")");
        }
        if (lowest < 1 || lowest > MAX_LOWEST) {
            throw new IllegalArgumentException("histogram's lowest trackable value " + lowest + " is not in 1.."
                + MAX_LOWEST);
        }
        if (highest < 2 * lowest || highest > MAX_HIGHEST) {
            throw new IllegalArgumentException("histogram's highest trackable value " + highest + " is not in "
                + 2 * lowest + ".." + MAX_HIGHEST);
        }
        if (payload < 0 || payload > MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException("histogram payload of " + payload + " bytes (at most "
                + MAX_PAYLOAD_BYTES + ")");
        }
        if (normalizingOffset != 0 || ratio != 1.0) {
            throw new IllegalArgumentException("histogram with a normalizing offset " + normalizingOffset
                + " or value ratio " + ratio + " (lossprobe's have 0 and 1)");
        }
    }

    /**
     * The counts array HdrHistogram allocates for a histogram of these parameters (its own arithmetic, so a test can
     * say what a header would cost without allocating it).
     */
    public static int countsArrayLength(long lowest, long highest, int digits) {
        long largestSingleUnitResolution = 2 * (long) Math.pow(10, digits);
        int subBucketCountMagnitude = (int) Math.ceil(Math.log(largestSingleUnitResolution) / Math.log(2));
        int subBucketHalfCountMagnitude = Math.max(subBucketCountMagnitude, 1) - 1;
        int subBucketCount = 1 << (subBucketHalfCountMagnitude + 1);
        int unitMagnitude = (int) (Math.log(lowest) / Math.log(2));
        long smallestUntrackable = ((long) subBucketCount) << unitMagnitude;
        int buckets = 1;
        while (smallestUntrackable <= highest) {
            if (smallestUntrackable > (Long.MAX_VALUE / 2)) {
                buckets++;
                break;
            }
            smallestUntrackable <<= 1;
            buckets++;
        }
        return (buckets + 1) * (subBucketCount / 2);
    }
}
