package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.lossprobe.core.counters.ThreadTimes;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.SenderLimit;
import io.lossprobe.core.result.SenderLimit.Reason;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.testing.MemoryTransport;
import io.lossprobe.core.testing.VirtualTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Why the sender fell behind, through the whole engine on {@link VirtualTime}: the {@link MemoryTransport}'s
 * sending thread is starved (another thread holds its CPU), blocked by the transport, or too slow per write, and
 * the step's {@code senderLimit} and warning must say which, with the figures exact.
 */
@Timeout(30)
class SenderLimitTest {
    private static final long MS = 1_000_000L;
    private static final long T0 = 7_000 * MS;

    private final VirtualTime time = new VirtualTime(T0);
    private final MemoryTransport transport = new MemoryTransport(time);

    @AfterEach
    void noVirtualTaskFailed() {
        assertThat(time.taskFailures()).isEmpty();
    }

    private StepResult step(int ports, long rate, long windowMs, boolean threadTimes) throws Exception {
        Plan plan = new Plan(List.of(MemoryTransport.NAME), ports, 40000, List.of(Level.of(rate)), windowMs * MS, 0,
            200 * MS, 64, "127.0.0.1");
        SendSideFactory senders = SendSideFactory.local("127.0.0.1", time,
            executor -> threadTimes ? transport.threadTimes() : ThreadTimes.NONE);
        return new RunEngine(plan, Map.of(MemoryTransport.NAME, transport), Map.of(), new RunListener() {
        }, StepHooks.NONE, ReceiveSideFactory.LOCAL, senders, 4242).withClock(time).run().steps().get(0);
    }

    @Test
    void aSenderThatKeptItsScheduleSaysNoneAndNoWarning() throws Exception {
        transport.writeCostNs(1_000);
        StepResult s = step(1, 1000, 100, true);
        SenderLimit l = s.senderLimit();
        assertThat(l.reason()).isEqualTo(Reason.NONE);
        assertThat(l.cpuNs()).isEqualTo(100 * 1_000L);
        assertThat(l.runQueueWaitNs()).isZero();
        assertThat(l.blockedSends()).isZero();
        assertThat(s.warnings()).noneMatch(w -> w.contains("the sender fell"));
    }

    /**
     * Starved from 80 ms to 130 ms of a 100 ms window at 10,000/s: the cycle after it sends the window's last batch
     * (64), so 200 - 64 = 136 stay behind; the thread waited 50 ms on a run queue and ran 864 us.
     */
    @Test
    void aSenderKeptOffItsCpuIsStarvedWithItsRunQueueWait() throws Exception {
        transport.writeCostNs(1_000).starve(T0 + 80 * MS, 50 * MS);
        StepResult s = step(1, 10_000, 100, true);
        SenderLimit l = s.senderLimit();
        assertThat(s.counts().behind()).isEqualTo(136);
        assertThat(l.reason()).isEqualTo(Reason.STARVED_OF_CPU);
        assertThat(l.behind()).isEqualTo(136);
        assertThat(l.runQueueWaitNs()).isEqualTo(50 * MS);
        assertThat(l.cpuNs()).isEqualTo(864 * 1_000L);
        assertThat(l.blockedSends()).isZero();
        assertThat(l.windowNs()).isEqualTo(130 * MS + 64 * 1_000L);
        assertThat(s.warnings()).contains("the sender fell behind by 136 messages: starved of CPU (its thread waited "
            + "50 ms on a run queue in a 0.13 s window, and ran 1 ms)");
    }

    /** Without the thread's times, the same stall is still starvation: late while its sends returned at once. */
    @Test
    void withoutThreadTimesALateSenderWhoseSendsTookLittleIsStarved() throws Exception {
        transport.writeCostNs(1_000).starve(T0 + 80 * MS, 50 * MS);
        SenderLimit l = step(1, 10_000, 100, false).senderLimit();
        assertThat(l.reason()).isEqualTo(Reason.STARVED_OF_CPU);
        assertThat(l.runQueueWaitNs()).isNull();
        assertThat(l.cpuNs()).isNull();
        assertThat(l.sendCallNs()).as("the writes' cost, the only time inside cycles").isEqualTo(864 * 1_000L);
    }

    /** Blocked from 90 ms past the window's end on one flow of two: every retry a blocked back-off later. */
    @Test
    void aSenderTheTransportWouldNotTakeMessagesFromIsHeldByItsKernel() throws Exception {
        transport.block(0, 0, 90, 50 * MS);
        StepResult s = step(2, 2000, 100, true);
        SenderLimit l = s.senderLimit();
        assertThat(s.counts().behind()).isEqualTo(10);
        assertThat(l.reason()).isEqualTo(Reason.HELD_BY_KERNEL);
        assertThat(l.blockedSends()).isEqualTo(transport.blockedAttempts()).isPositive();
        // Blocked at seq 90 (due at 90 ms) until the window's end at 100 ms, retried each 50 us.
        assertThat((double) l.heldNs()).isCloseTo(10.0 * MS, within(0.1 * MS));
        assertThat(l.runQueueWaitNs()).isZero();
        assertThat(s.warnings()).contains("the sender fell behind by 10 messages: held back by its own kernel ("
            + l.blockedSends() + " sends blocked, holding it back 10 ms of a 0.10 s window; 0 refused)");
    }

    /** 200 us a write at 10,000/s needs two seconds a second: the thread runs the whole window and falls behind. */
    @Test
    void aSenderBusyAllTheWindowIsAtItsCpuLimit() throws Exception {
        transport.writeCostNs(200_000);
        StepResult s = step(1, 10_000, 100, true);
        SenderLimit l = s.senderLimit();
        assertThat(s.counts().behind()).isPositive();
        assertThat(l.reason()).isEqualTo(Reason.AT_CPU_LIMIT);
        assertThat(l.runQueueWaitNs()).isZero();
        assertThat((double) l.cpuNs()).isGreaterThanOrEqualTo(0.9 * l.windowNs());
        assertThat(s.warnings()).anyMatch(w -> w.startsWith("the sender fell behind by " + s.counts().behind()
            + " messages: at its own CPU limit (its thread ran "));
    }
}
