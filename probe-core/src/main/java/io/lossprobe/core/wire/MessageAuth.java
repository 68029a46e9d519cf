package io.lossprobe.core.wire;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The per-run key that authenticates every data message: a 64-bit SipHash-2-4 tag (Aumasson and Bernstein, 2012:
 * a keyed pseudo-random function built for short inputs) over the header's first five words. Whoever has not seen
 * the key cannot make a message a receiver counts: not by guessing the run id, not by replaying one with a new
 * sequence number. Between hosts the key is derived from the control handshake (both sides' fresh nonces and the
 * shared secret), so it is new for every run and never crosses the wire; in one process it is random.
 *
 * <p>The tag is computed over the five words as SipHash's 64-bit little-endian message words, which is exactly
 * SipHash-2-4 of their 40 bytes in little-endian order (the test checks it against OpenSSL's SipHash).
 */
public final class MessageAuth {
    /** SipHash's last block for a 40-byte message: the length in the top byte, no bytes left over. */
    private static final long LENGTH_BYTE = 40L << 56;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final long k0;
    private final long k1;

    public MessageAuth(long k0, long k1) {
        this.k0 = k0;
        this.k1 = k1;
    }

    /** A fresh random key, for a run whose senders and receivers share one process. */
    public static MessageAuth random() {
        return new MessageAuth(RANDOM.nextLong(), RANDOM.nextLong());
    }

    /**
     * The data key of run {@code runId} under a control session's key: HMAC-SHA256(sessionKey, label || runId),
     * first 16 bytes. Both ends compute it; it never travels.
     */
    public static MessageAuth derive(byte[] sessionKey, int runId) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(sessionKey, "HmacSHA256"));
            mac.update("lossprobe data key v1".getBytes(StandardCharsets.US_ASCII));
            mac.update(bigEndian(runId));
            byte[] out = mac.doFinal();
            return new MessageAuth(littleEndian(out, 0), littleEndian(out, 8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    /**
     * This run key wrapped for one control session ({@code run --from A --target B}: the controller gives A's
     * senders and B's receivers one key through two sessions): the key's 16 bytes XORed with
     * HMAC-SHA256(sessionKey, label || runId), first 16 bytes. The session key is secret and used for one run id
     * once, so the pad is a one-time pad: the wrapped key tells an eavesdropper nothing, and the frame carrying it
     * is MACed, so it cannot be changed on the way. Hexadecimal, 32 digits.
     */
    public String wrapFor(byte[] sessionKey, int runId) {
        byte[] key = new byte[16];
        putLittleEndian(key, 0, k0);
        putLittleEndian(key, 8, k1);
        byte[] pad = wrapPad(sessionKey, runId);
        StringBuilder hex = new StringBuilder(32);
        for (int i = 0; i < 16; i++) {
            hex.append(String.format("%02x", (key[i] ^ pad[i]) & 0xFF));
        }
        return hex.toString();
    }

    /** The run key {@link #wrapFor} wrapped; a value that is not 32 hexadecimal digits is refused. */
    public static MessageAuth unwrap(byte[] sessionKey, int runId, String wrapped) {
        if (wrapped == null || !wrapped.matches("[0-9a-f]{32}")) {
            throw new IllegalArgumentException("a wrapped data key is 32 hexadecimal digits");
        }
        byte[] pad = wrapPad(sessionKey, runId);
        byte[] key = new byte[16];
        for (int i = 0; i < 16; i++) {
            key[i] = (byte) (Integer.parseInt(wrapped, 2 * i, 2 * i + 2, 16) ^ pad[i]);
        }
        return new MessageAuth(littleEndian(key, 0), littleEndian(key, 8));
    }

    private static byte[] wrapPad(byte[] sessionKey, int runId) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(sessionKey, "HmacSHA256"));
            mac.update("lossprobe data key wrap v1".getBytes(StandardCharsets.US_ASCII));
            mac.update(bigEndian(runId));
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    /** Whether {@code other} is the same key (tests; the keys themselves never leave this class). */
    public boolean sameKeyAs(MessageAuth other) {
        return other != null && k0 == other.k0 && k1 == other.k1;
    }

    /**
     * The key of one pass of the run (one transport at one message size): HMAC-SHA256 keyed with this run key,
     * over a label, the transport's name and the size, first 16 bytes. The header names neither, so every pass
     * tags its messages under its own key: a message of the UDP pass replayed into the same step, flow and sequence
     * of the TCP or Aeron pass (or of another size's pass) fails the tag there and is foreign, never counted as
     * received. Both ends derive it from the run's key, which never travels.
     */
    public MessageAuth forPass(String transport, int messageSize) {
        byte[] out = mac("lossprobe pass key v1", transport, messageSize);
        return new MessageAuth(littleEndian(out, 0), littleEndian(out, 8));
    }

    /**
     * A 32-bit value both ends derive from this key for {@code label} and {@code index} (HMAC-SHA256 keyed with the
     * key, first 4 bytes): an identifier a transport's own unauthenticated framing carries, such as Aeron's session
     * id of a flow, which the receiving side then knows without being told and a spoofer off the path cannot guess.
     */
    public int derivedInt(String label, int index) {
        byte[] out = mac("lossprobe derived int v1", label, index);
        return (out[0] & 0xFF) << 24 | (out[1] & 0xFF) << 16 | (out[2] & 0xFF) << 8 | (out[3] & 0xFF);
    }

    /** HMAC-SHA256 keyed with this key over {@code label}, then {@code name}'s length and bytes, then {@code value}. */
    private byte[] mac(String label, String name, int value) {
        try {
            byte[] key = new byte[16];
            putLittleEndian(key, 0, k0);
            putLittleEndian(key, 8, k1);
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(label.getBytes(StandardCharsets.US_ASCII));
            byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
            mac.update(bigEndian(bytes.length));
            mac.update(bytes);
            mac.update(bigEndian(value));
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    private static byte[] bigEndian(int v) {
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }

    private static void putLittleEndian(byte[] b, int at, long v) {
        for (int i = 0; i < 8; i++) {
            b[at + i] = (byte) (v >>> (8 * i));
        }
    }

    static long littleEndian(byte[] b, int at) {
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (b[at + i] & 0xFF);
        }
        return v;
    }

    /**
     * The tag of a header's first five words: each word and then the length block absorbed with two SipRounds,
     * then four finalisation rounds. Allocation-free once compiled: the {@link SipState} never leaves this method,
     * so the JIT keeps its four words in registers (0 B/op in HeaderCodecBenchmark.tag, FlowReceiverBenchmark and
     * SendLoopBenchmark; no slower than the rounds written out by hand, measured side by side).
     */
    public long tag(long w0, long w1, long w2, long w3, long w4) {
        SipState s = new SipState(k0, k1);
        s.absorb(w0);
        s.absorb(w1);
        s.absorb(w2);
        s.absorb(w3);
        s.absorb(w4);
        s.absorb(LENGTH_BYTE);
        return s.finish();
    }

    /** True when {@code tag} is the tag of the five words. */
    public boolean verify(long w0, long w1, long w2, long w3, long w4, long tag) {
        return tag(w0, w1, w2, w3, w4) == tag;
    }

    /** SipHash-2-4's four state words, with its round written once. */
    private static final class SipState {
        private long v0;
        private long v1;
        private long v2;
        private long v3;

        SipState(long k0, long k1) {
            v0 = k0 ^ 0x736f6d6570736575L;
            v1 = k1 ^ 0x646f72616e646f6dL;
            v2 = k0 ^ 0x6c7967656e657261L;
            v3 = k1 ^ 0x7465646279746573L;
        }

        /** One 64-bit message word (little-endian), two SipRounds: the "2" of SipHash-2-4. */
        void absorb(long m) {
            v3 ^= m;
            round();
            round();
            v0 ^= m;
        }

        /** The four finalisation rounds (the "4") and the tag. */
        long finish() {
            v2 ^= 0xff;
            for (int i = 0; i < 4; i++) {
                round();
            }
            return v0 ^ v1 ^ v2 ^ v3;
        }

        private void round() {
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
        }
    }
}
