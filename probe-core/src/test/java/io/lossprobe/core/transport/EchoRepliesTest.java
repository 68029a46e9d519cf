package io.lossprobe.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EchoRepliesTest {
    private static final MessageAuth KEY = MessageAuth.random();
    private static final long DATA = MessageHeader.word0(MessageHeader.KIND_DATA, 0);
    private static final long WARMUP = MessageHeader.word0(MessageHeader.KIND_WARMUP, 0);

    private static EchoReplies replies(int flows) {
        FlowReceiver[] accounting = new FlowReceiver[flows];
        for (int i = 0; i < flows; i++) {
            accounting[i] = new FlowReceiver(i, 7, 64, 2, false, KEY);
        }
        return new EchoReplies(accounting);
    }

    @Test
    void warmUpsAreNeverCountedAndAStepReportsOnlyItsOwnReplies() {
        EchoReplies r = replies(2);
        r.flow(0).sent(DATA); // the previous step's
        r.beginStep();
        r.flow(0).sent(WARMUP);
        r.flow(0).dropped(WARMUP);
        r.flow(0).sent(DATA);
        r.flow(0).sent(DATA);
        r.flow(1).dropped(DATA);
        r.flow(1).sentCounted(3);
        r.flow(1).droppedCounted(2);

        Map<String, Long> totals = new HashMap<>();
        Map<Integer, Map<String, Long>> flows = new HashMap<>();
        flows.put(0, new HashMap<>(Map.of("other", 1L)));
        r.report(totals, flows);

        assertThat(totals).containsEntry(EchoReplies.SENT, 5L).containsEntry(EchoReplies.DROPPED, 3L);
        assertThat(flows.get(0)).containsEntry(EchoReplies.SENT, 2L).containsEntry(EchoReplies.DROPPED, 0L)
            .containsEntry("other", 1L);
        assertThat(flows.get(1)).containsEntry(EchoReplies.SENT, 3L).containsEntry(EchoReplies.DROPPED, 3L);
    }

    @Test
    void aReplyIsTaggedUnderTheRunsKeyAndTheVocabularyIsDeclared() {
        EchoReplies r = replies(1);
        long w0 = MessageHeader.replyOf(DATA);
        long w1 = MessageHeader.word1(7, 0, 64);
        assertThat(KEY.verify(w0, w1, 5, 10, 11, r.flow(0).tag(w0, w1, 5, 10, 11))).isTrue();
        assertThat(EchoReplies.withCounters(java.util.List.of())).extracting(CounterDescriptor::key)
            .containsExactly(EchoReplies.SENT, EchoReplies.DROPPED);
        assertThat(EchoReplies.COUNTERS.get(1).category()).isEqualTo(CounterDescriptor.Category.REPLY_LOSS);
    }
}
