package io.lossprobe.core.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MessageAuthTest {
    /**
     * SipHash-2-4 of the 40 bytes 00 01 .. 27 under the key 00 01 .. 0f, as OpenSSL computes it
     * ({@code openssl mac -macopt hexkey:000102030405060708090a0b0c0d0e0f -macopt size:8 -in m40 SIPHASH} prints
     * D0A704536BA93E0E, the tag's bytes in little-endian order). The five words are those bytes read little-endian.
     */
    @Test
    void theTagIsSipHash24AsOpenSslComputesIt() {
        byte[] key = new byte[16];
        byte[] message = new byte[40];
        for (int i = 0; i < 40; i++) {
            message[i] = (byte) i;
            if (i < 16) {
                key[i] = (byte) i;
            }
        }
        MessageAuth auth = new MessageAuth(MessageAuth.littleEndian(key, 0), MessageAuth.littleEndian(key, 8));
        long[] w = new long[5];
        for (int i = 0; i < 5; i++) {
            w[i] = MessageAuth.littleEndian(message, 8 * i);
        }
        assertThat(auth.tag(w[0], w[1], w[2], w[3], w[4])).isEqualTo(0x0E3EA96B5304A7D0L);
    }

    @Test
    void anyChangedWordChangesTheTag() {
        MessageAuth auth = MessageAuth.random();
        long[] w = {11, 22, 33, 44, 55};
        long tag = auth.tag(w[0], w[1], w[2], w[3], w[4]);
        for (int i = 0; i < 5; i++) {
            for (int bit = 0; bit < 64; bit += 7) {
                long[] m = w.clone();
                m[i] ^= 1L << bit;
                assertThat(auth.verify(m[0], m[1], m[2], m[3], m[4], tag)).as("word %d bit %d", i, bit).isFalse();
            }
        }
        assertThat(auth.verify(w[0], w[1], w[2], w[3], w[4], tag)).isTrue();
    }

    @Test
    void theDataKeyIsTheSameOnBothEndsAndDiffersPerRunAndSession() {
        byte[] session = "both ends derive this from the handshake".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        MessageAuth a = MessageAuth.derive(session, 7);
        MessageAuth b = MessageAuth.derive(session.clone(), 7);
        assertThat(a.tag(1, 2, 3, 4, 5)).isEqualTo(b.tag(1, 2, 3, 4, 5));
        Set<Long> tags = new HashSet<>();
        tags.add(a.tag(1, 2, 3, 4, 5));
        tags.add(MessageAuth.derive(session, 8).tag(1, 2, 3, 4, 5));
        session[0] ^= 1;
        tags.add(MessageAuth.derive(session, 7).tag(1, 2, 3, 4, 5));
        assertThat(tags).hasSize(3);
    }

    /**
     * The header names neither transport nor size: the pass key is what binds a message to its pass. A message
     * tagged in the UDP pass must not verify as the same step, flow and sequence of the TCP or Aeron pass, nor of
     * another size's UDP pass; and both ends, deriving from the same run key, agree on each pass's key.
     */
    @Test
    void aMessageOfOnePassDoesNotVerifyInAnother() {
        byte[] session = "both ends derive this from the handshake".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        MessageAuth run = MessageAuth.derive(session, 7);
        long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, 3);
        long w1 = MessageHeader.word1(7, 2, 64);
        long tag = run.forPass("udp", 64).tag(w0, w1, 99, 1_000, 1_001);
        assertThat(MessageAuth.derive(session.clone(), 7).forPass("udp", 64).verify(w0, w1, 99, 1_000, 1_001, tag))
            .isTrue();
        for (String other : new String[] {"tcp", "aeron", "ud", "udpp"}) {
            assertThat(run.forPass(other, 64).verify(w0, w1, 99, 1_000, 1_001, tag)).as(other).isFalse();
        }
        assertThat(run.forPass("udp", 1024).verify(w0, w1, 99, 1_000, 1_001, tag)).isFalse();
        assertThat(run.verify(w0, w1, 99, 1_000, 1_001, tag)).as("the run key itself").isFalse();
    }

    /**
     * {@code run --from}: the controller's run key reaches two sessions wrapped under each; each unwraps the same
     * key, the two wrappings differ, another session's key (or another run id) unwraps something else, and what is
     * not 32 hexadecimal digits is refused.
     */
    @Test
    void aWrappedRunKeyUnwrapsOnlyInItsSession() {
        byte[] s1 = "the first session's key, 32 bytes".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] s2 = "the other session's key, 32 bytes".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        MessageAuth run = MessageAuth.random();
        String w1 = run.wrapFor(s1, 7);
        String w2 = run.wrapFor(s2, 7);
        assertThat(w1).matches("[0-9a-f]{32}").isNotEqualTo(w2);
        assertThat(MessageAuth.unwrap(s1, 7, w1).sameKeyAs(run)).isTrue();
        assertThat(MessageAuth.unwrap(s2, 7, w2).sameKeyAs(run)).isTrue();
        assertThat(MessageAuth.unwrap(s2, 7, w1).sameKeyAs(run)).as("another session").isFalse();
        assertThat(MessageAuth.unwrap(s1, 8, w1).sameKeyAs(run)).as("another run").isFalse();
        long tag = run.tag(1, 2, 3, 4, 5);
        assertThat(MessageAuth.unwrap(s1, 7, w1).verify(1, 2, 3, 4, 5, tag)).isTrue();
        for (String bad : new String[] {null, "", "G".repeat(32), w1 + "0", "zz"
            + w1.substring(2)}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> MessageAuth.unwrap(s1, 7, bad)).as(bad)
                .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
