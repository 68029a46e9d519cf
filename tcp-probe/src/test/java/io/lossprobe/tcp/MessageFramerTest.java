package io.lossprobe.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Decoder fuzz: however TCP cuts a stream into reads, the framer delivers exactly the messages that were written,
 * in order; garbage is reported once as corrupt and ends the connection. Random cases use fixed seeds, so a
 * failure names its seed and reproduces.
 */
class MessageFramerTest {
    private static final int RUN_ID = 0x5eed;
    private static final int FLOW = 3;
    private static final int STEP = 1;
    private static final MessageAuth KEY = new MessageAuth(0x5eed, 0xf00d);

    private static FlowReceiver flow(int size) {
        return new FlowReceiver(FLOW, RUN_ID, size, 2, false, KEY);
    }

    /** What the sink saw: one row per message, the six words and the length. */
    private static final class Recorder implements MessageSink {
        final List<long[]> messages = new ArrayList<>();

        @Override
        public void onMessage(long word0, long word1, long sequence, long sendTimeNs, long actualSendNs, long tag,
                              int length, long arrivalNs) {
            messages.add(new long[] {word0, word1, sequence, sendTimeNs, actualSendNs, tag, length});
        }
    }

    private static byte[] stream(int messages, int size, Random random) {
        ByteBuffer b = ByteBuffer.allocate(messages * size);
        for (int i = 0; i < messages; i++) {
            long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, FLOW);
            long w1 = MessageHeader.word1(RUN_ID, STEP, size);
            long sendNs = random.nextLong() & Long.MAX_VALUE;
            b.putLong(w0).putLong(w1).putLong(i).putLong(sendNs).putLong(sendNs).putLong(KEY.tag(w0, w1, i, sendNs,
                sendNs));
            byte[] padding = new byte[size - MessageHeader.LENGTH];
            random.nextBytes(padding); // padding may even look like a header: framing must not care
            b.put(padding);
        }
        return b.array();
    }

    private static List<long[]> expected(byte[] stream, int size, int messages) {
        ByteBuffer b = ByteBuffer.wrap(stream);
        List<long[]> out = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            int at = i * size;
            out.add(new long[] {b.getLong(at), b.getLong(at + 8), b.getLong(at + 16), b.getLong(at + 24),
                b.getLong(at + 32), b.getLong(at + 40), size});
        }
        return out;
    }

    private static long[] flat(List<long[]> rows) {
        return rows.stream().flatMapToLong(java.util.Arrays::stream).toArray();
    }

    /** Feeds {@code data} cut at {@code cuts} (ascending offsets), alternating heap and pooled direct buffers. */
    private static void feed(EmbeddedChannel ch, byte[] data, int[] cuts) {
        int from = 0;
        for (int i = 0; i <= cuts.length && ch.isOpen(); i++) {
            int to = i < cuts.length ? cuts[i] : data.length;
            if (to > from) {
                ByteBuf chunk = (i & 1) == 0 ? Unpooled.copiedBuffer(data, from, to - from)
                    : ByteBufAllocator.DEFAULT.directBuffer(to - from).writeBytes(data, from, to - from);
                ch.writeInbound(chunk);
            }
            from = to;
        }
        ch.checkException();
    }

    private static int[] randomCuts(Random random, int length, int maxChunk) {
        List<Integer> cuts = new ArrayList<>();
        int at = 0;
        while (true) {
            at += 1 + random.nextInt(maxChunk);
            if (at >= length) {
                break;
            }
            cuts.add(at);
        }
        return cuts.stream().mapToInt(Integer::intValue).toArray();
    }

    private static void assertDecodes(byte[] data, int size, int messages, int[] cuts, String what) {
        Recorder recorder = new Recorder();
        ConnectionStats stats = new ConnectionStats();
        MessageFramer framer = new MessageFramer(recorder, size, stats);
        EmbeddedChannel ch = new EmbeddedChannel(framer);
        feed(ch, data, cuts);
        assertThat(flat(recorder.messages)).as(what).isEqualTo(flat(expected(data, size, messages)));
        assertThat(framer.rejected()).as(what).isFalse();
        assertThat(ch.isOpen()).as(what).isTrue();
        ch.finishAndReleaseAll();
        assertThat(stats.truncatedBytes).as(what).isZero();
    }

    @Test
    void everyOneAndTwoCutSplitOfAStreamDecodesIdentically() {
        int size = MessageHeader.LENGTH + 8;
        int messages = 3;
        byte[] data = stream(messages, size, new Random(1));
        assertDecodes(data, size, messages, new int[0], "no cut");
        for (int a = 1; a < data.length; a++) {
            assertDecodes(data, size, messages, new int[] {a}, "cut at " + a);
            for (int b = a + 1; b < data.length; b++) {
                assertDecodes(data, size, messages, new int[] {a, b}, "cuts at " + a + "," + b);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {48, 49, 64, 1400})
    void oneByteAtATimeDecodesIdentically(int size) {
        byte[] data = stream(5, size, new Random(size));
        int[] cuts = new int[data.length - 1];
        for (int i = 0; i < cuts.length; i++) {
            cuts[i] = i + 1;
        }
        assertDecodes(data, size, 5, cuts, "byte by byte, size " + size);
    }

    @Test
    void randomSplitsOfRandomStreamsDecodeIdentically() {
        int[] sizes = {48, 49, 63, 64, 100, 512, 1400, 4096};
        for (long seed = 0; seed < 2_000; seed++) {
            Random random = new Random(seed);
            int size = sizes[random.nextInt(sizes.length)];
            int messages = 1 + random.nextInt(40);
            byte[] data = stream(messages, size, random);
            int[] cuts = randomCuts(random, data.length, 1 + random.nextInt(3 * size));
            assertDecodes(data, size, messages, cuts, "seed " + seed);
        }
    }

    @Test
    void decodedMessagesAccountExactlyInTheFlowReceiver() {
        int size = 64;
        int messages = 5_000;
        Random random = new Random(7);
        byte[] data = stream(messages, size, random);
        FlowReceiver flow = flow(size);
        flow.beginStep(STEP, 8192);
        EmbeddedChannel ch = new EmbeddedChannel(new MessageFramer(flow::onMessage, size, new ConnectionStats()));
        feed(ch, data, randomCuts(random, data.length, 700));
        FlowReceiver.Summary summary = flow.closeStep(messages);

        assertThat(summary.received()).isEqualTo(messages);
        assertThat(summary.corrupt()).isZero();
        assertThat(summary.duplicates()).isZero();
        assertThat(summary.reordered()).isZero();
        assertThat(summary.lostInRuns()).isZero();
        ch.finishAndReleaseAll();
    }

    /** Ways a stream stops being lossprobe messages of the plan's length. */
    enum Garbage {
        WRONG_MAGIC, WRONG_VERSION, LENGTH_ZERO, LENGTH_TOO_LONG, LENGTH_TOO_SHORT, RANDOM_BYTES;

        byte[] bytes(int size, Random random) {
            ByteBuffer b = ByteBuffer.allocate(size);
            long word0 = MessageHeader.word0(MessageHeader.KIND_DATA, FLOW);
            long word1 = MessageHeader.word1(RUN_ID, STEP, size);
            switch (this) {
                case WRONG_MAGIC -> word0 ^= 1L << 40;
                case WRONG_VERSION -> word0 ^= 1L << 25;
                case LENGTH_ZERO -> word1 = MessageHeader.word1(RUN_ID, STEP, 0);
                case LENGTH_TOO_LONG -> word1 = MessageHeader.word1(RUN_ID, STEP, size + 1);
                case LENGTH_TOO_SHORT -> word1 = MessageHeader.word1(RUN_ID, STEP, size - 1);
                case RANDOM_BYTES -> {
                    random.nextBytes(b.array());
                    b.array()[0] = 0; // never the magic's first byte 'L'
                    return b.array();
                }
                default -> throw new AssertionError(this);
            }
            b.putLong(word0).putLong(word1).putLong(0).putLong(0).putLong(0).putLong(0);
            return b.array();
        }
    }

    @ParameterizedTest
    @EnumSource(Garbage.class)
    void garbageIsReportedOnceAsCorruptAndClosesTheConnection(Garbage garbage) {
        for (long seed = 0; seed < 300; seed++) {
            Random random = new Random(seed);
            int size = MessageHeader.LENGTH + random.nextInt(100);
            int good = random.nextInt(6);
            byte[] valid = stream(good + 3, size, random);
            // good messages, garbage, then more valid messages that must not be read after the garbage
            byte[] data = new byte[valid.length + size];
            System.arraycopy(valid, 0, data, 0, good * size);
            System.arraycopy(garbage.bytes(size, random), 0, data, good * size, size);
            System.arraycopy(valid, good * size, data, (good + 1) * size, valid.length - good * size);

            FlowReceiver flow = flow(size);
            flow.beginStep(STEP, 4096);
            ConnectionStats stats = new ConnectionStats();
            MessageFramer framer = new MessageFramer(flow::onMessage, size, stats);
            EmbeddedChannel ch = new EmbeddedChannel(framer);
            feed(ch, data, randomCuts(random, data.length, 2 * size));
            FlowReceiver.Summary summary = flow.closeStep(good);

            String what = garbage + " seed " + seed;
            assertThat(summary.received()).as(what).isEqualTo(good);
            assertThat(summary.corrupt()).as(what).isEqualTo(1);
            assertThat(framer.rejected()).as(what).isTrue();
            assertThat(ch.isOpen()).as(what).isFalse();
            assertThat(stats.garbageCloses).as(what).isEqualTo(1);
            assertThat(stats.closed).as(what).isEqualTo(1);
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aMessageCutOffByTheEndOfTheStreamIsTruncatedNotCorrupt() {
        int size = 64;
        byte[] data = stream(4, size, new Random(3));
        int end = 3 * size + 40; // three messages and 40 bytes of the fourth
        byte[] cut = java.util.Arrays.copyOf(data, end);
        FlowReceiver flow = flow(size);
        flow.beginStep(STEP, 4096);
        ConnectionStats stats = new ConnectionStats();
        EmbeddedChannel ch = new EmbeddedChannel(new MessageFramer(flow::onMessage, size, stats));
        feed(ch, cut, new int[] {10, 100, 150});
        ch.close();
        FlowReceiver.Summary summary = flow.closeStep(4);

        assertThat(summary.received()).isEqualTo(3);
        assertThat(summary.corrupt()).isZero();
        assertThat(summary.lostInRuns()).isEqualTo(1);
        assertThat(stats.truncatedBytes).isEqualTo(40);
        assertThat(stats.garbageCloses).isZero();
        ch.finishAndReleaseAll();
    }
}
