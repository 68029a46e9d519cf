package io.lossprobe.core.result;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.zip.Deflater;

/** Compressed HdrHistograms with any header, as a hostile peer or file would write them. */
public final class CraftedHistograms {
    /** The V2 cookies as HdrHistogram writes them: the base with its word-size nibble. */
    public static final int ENCODING_COOKIE = 0x1c849313;
    public static final int COMPRESSED_COOKIE = 0x1c849314;
    private static final int HEADER_BYTES = 40;

    private CraftedHistograms() {
    }

    /** A compressed histogram whose header says these values, with {@code payload} after it. */
    public static byte[] compressed(int cookie, int payloadLength, int normalizingOffset, int digits, long lowest,
                                    long highest, double ratio, byte[] payload) {
        ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES + payload.length);
        header.putInt(cookie).putInt(payloadLength).putInt(normalizingOffset).putInt(digits).putLong(lowest)
            .putLong(highest).putDouble(ratio).put(payload);
        Deflater d = new Deflater();
        d.setInput(header.array());
        d.finish();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] chunk = new byte[4096];
        while (!d.finished()) {
            out.write(chunk, 0, d.deflate(chunk));
        }
        d.end();
        byte[] deflated = out.toByteArray();
        return ByteBuffer.allocate(8 + deflated.length).putInt(COMPRESSED_COOKIE).putInt(deflated.length)
            .put(deflated).array();
    }

    /** The header of a valid lossprobe histogram but for its ranges: no counts. */
    public static byte[] ranges(int digits, long lowest, long highest) {
        return compressed(ENCODING_COOKIE, 0, 0, digits, lowest, highest, 1.0, new byte[0]);
    }
}
