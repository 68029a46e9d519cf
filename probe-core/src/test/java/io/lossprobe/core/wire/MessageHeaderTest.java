package io.lossprobe.core.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class MessageHeaderTest {
    @Test
    void fieldsRoundTripThroughTheWords() {
        long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, 47);
        long w1 = MessageHeader.word1(0xCAFEBABE, 65535, 1400);
        assertThat(MessageHeader.isLossprobe(w0)).isTrue();
        assertThat(MessageHeader.kind(w0)).isEqualTo(MessageHeader.KIND_DATA);
        assertThat(MessageHeader.flowId(w0)).isEqualTo(47);
        assertThat(MessageHeader.runId(w1)).isEqualTo(0xCAFEBABE);
        assertThat(MessageHeader.step(w1)).isEqualTo(65535);
        assertThat(MessageHeader.length(w1)).isEqualTo(1400);
    }

    @Test
    void theByteLayoutIsTheDocumentedOne() {
        ByteBuffer b = ByteBuffer.allocate(32); // big-endian, as on the wire
        b.putLong(MessageHeader.word0(MessageHeader.KIND_WARMUP, 0x0102));
        b.putLong(MessageHeader.word1(0x0A0B0C0D, 0x0304, 64));
        b.putLong(0x1122334455667788L).putLong(42);
        byte[] a = b.array();
        assertThat(new String(a, 0, 4, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("LPRB");
        assertThat(a[4]).isEqualTo((byte) MessageHeader.VERSION);
        assertThat(a[5]).isEqualTo((byte) MessageHeader.KIND_WARMUP);
        assertThat(new byte[] {a[6], a[7]}).containsExactly(1, 2);
        assertThat(new byte[] {a[8], a[9], a[10], a[11]}).containsExactly(0x0A, 0x0B, 0x0C, 0x0D);
        assertThat(new byte[] {a[12], a[13]}).containsExactly(3, 4);
        assertThat(new byte[] {a[14], a[15]}).containsExactly(0, 64);
        assertThat(a[16]).isEqualTo((byte) 0x11);
        assertThat(a[31]).isEqualTo((byte) 42);
    }

    @Test
    void aForeignDatagramIsNotOurs() {
        assertThat(MessageHeader.isLossprobe(0)).isFalse();
        assertThat(MessageHeader.isLossprobe(MessageHeader.word0(1, 1) ^ (1L << 24))).isFalse();
    }

    @Test
    void anEchoReplyIsTheRequestWithKindThree() {
        long request = MessageHeader.word0(MessageHeader.KIND_DATA, 47);
        long reply = MessageHeader.echoOf(request);
        assertThat(MessageHeader.KIND_ECHO).isEqualTo(3);
        assertThat(MessageHeader.kind(reply)).isEqualTo(MessageHeader.KIND_ECHO);
        assertThat(MessageHeader.isLossprobe(reply)).isTrue();
        assertThat(MessageHeader.flowId(reply)).isEqualTo(47);
        assertThat(reply ^ request).as("only byte 5 differs").isEqualTo((long) (1 ^ 3) << 16);
    }

    /** docs/wire-format.md names every kind the code defines, with its number. */
    @Test
    void everyKindIsDocumented() throws Exception {
        String doc = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "wire-format.md"));
        String kindRow = doc.lines().filter(l -> l.startsWith("| kind |")).findFirst().orElseThrow();
        int kinds = 0;
        for (java.lang.reflect.Field f : MessageHeader.class.getFields()) {
            if (f.getName().startsWith("KIND_")) {
                kinds++;
                assertThat(kindRow).as(f.getName()).contains(f.getInt(null) + " = ");
            }
        }
        assertThat(kinds).isEqualTo(3);
    }

    @Test
    void aWarmUpIsAnsweredAsAWarmUpAndDataAsAnEcho() {
        long warm = MessageHeader.word0(MessageHeader.KIND_WARMUP, 7);
        long data = MessageHeader.word0(MessageHeader.KIND_DATA, 7);
        assertThat(MessageHeader.replyOf(warm)).isEqualTo(warm);
        assertThat(MessageHeader.kind(MessageHeader.replyOf(data))).isEqualTo(MessageHeader.KIND_ECHO);
        assertThat(MessageHeader.flowId(MessageHeader.replyOf(data))).isEqualTo(7);
    }
}
