package io.lossprobe.core.pacing;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SendPacing;
import org.junit.jupiter.api.Test;

/** When the one send driver starts the next cycle, for each pacing a transport asks for, on an injected clock. */
class SendDriverTest {
    private static final io.lossprobe.core.wire.MessageAuth KEY = new io.lossprobe.core.wire.MessageAuth(3, 4);
    private static final long US = 1_000L;

    private static final class Writer implements MessageWriter {
        boolean blocked;

        @Override
        public int write(long word0, long word1, long sequence, long sendTimeNs, long actualNs, long tag) {
            return blocked ? BLOCKED : ACCEPTED;
        }

        @Override
        public void flush() {
        }
    }

    private static SendLoop loop(Writer w, long rate) {
        SendLoop loop = new SendLoop(new MessageWriter[] {w}, 1, 0, 64, new long[] {rate}, 0, 1_000_000_000L, 64,
            SendFilter.NONE, null, KEY);
        loop.start(0);
        return loop;
    }

    @Test
    void aCycleWaitsForTheNextDueMessage() {
        SendLoop loop = loop(new Writer(), 1000); // one message per ms
        int sent = loop.doWork(0);
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 0, 10 * US, SendPacing.DEFAULT)).isEqualTo(1_000 * US);
    }

    @Test
    void theMinimumCycleBatchesMessagesThatFallDueSooner() {
        SendLoop loop = loop(new Writer(), 100_000); // one message every 10 us
        int sent = loop.doWork(0);
        SendPacing udp = SendPacing.DEFAULT.withMinCycleNs(50 * US);
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 0, 2 * US, udp)).isEqualTo(50 * US);
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 0, 2 * US, SendPacing.DEFAULT)).isEqualTo(10 * US);
    }

    @Test
    void aFullCycleIsBehindAndIsFollowedAtOnceWhateverTheMinimumCycle() {
        SendLoop loop = loop(new Writer(), 10_000_000);
        int sent = loop.doWork(100 * US); // 1,000 due, 64 taken
        assertThat(sent).isEqualTo(64);
        SendPacing udp = SendPacing.DEFAULT.withMinCycleNs(50 * US);
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 100 * US, 101 * US, udp)).isEqualTo(101 * US);
    }

    @Test
    void everyDueFlowBlockedBacksOffInsteadOfSpinning() {
        Writer w = new Writer();
        w.blocked = true;
        SendLoop loop = loop(w, 1_000_000);
        int sent = loop.doWork(100 * US);
        assertThat(sent).isZero();
        assertThat(SendDriver.nextCycleNs(loop, sent, 64, 100 * US, 101 * US, SendPacing.DEFAULT))
            .isEqualTo(101 * US + SendPacing.DEFAULT.blockedBackoffNs());
    }
}
