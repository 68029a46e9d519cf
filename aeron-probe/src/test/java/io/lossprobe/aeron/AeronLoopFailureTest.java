package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.Closing;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.wire.MessageAuth;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the Aeron receiving agent's runner does when something goes wrong on its thread: an exception is counted
 * per step and said in a note (it was printed as a stack trace before); an Error, which ends the thread, makes
 * every later command fail at once instead of after 30 s; closing a stuck agent returns within a bound.
 */
@Tag("system")
class AeronLoopFailureTest {
    private static AeronReceiver open(int port) throws Exception {
        Plan plan = new Plan(List.of("aeron"), 1, port, List.of(Level.parse("1k")), 1_000_000_000L, 0,
            1_000_000_000L, 64, "127.0.0.1");
        FlowReceiver[] flows = {new FlowReceiver(0, 1, 64, 1, false, MessageAuth.random())};
        return (AeronReceiver) new AeronTransport().openReceiver(new ReceiverSpec(plan, "127.0.0.1", flows,
            Map.of(AeronOptions.TERM_LENGTH_OPTION.key(), "64k")));
    }

    /** A command that throws on the agent's thread: it leaves doWork, as a handler's exception would. */
    private static void throwOnAgent(AeronReceiver rx, RuntimeException e) {
        assertThat(rx.poller().offer(() -> {
            throw e;
        })).isTrue();
    }

    @Test
    @Timeout(60)
    void anExceptionOnTheReceiveThreadIsCountedAndSaidInTheStepsNotes() throws Exception {
        try (AeronReceiver rx = open(43950)) {
            rx.beginStep(0);
            throwOnAgent(rx, new IllegalStateException("a handler failed"));
            throwOnAgent(rx, new IllegalStateException("a handler failed again"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (rx.poller().errors().sinceStepStart() < 2 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(rx.endStep().notes()).containsExactly(
                "aeron lossprobe-aeron-rx thread: 2 handler error(s), the last: a handler failed again");
            rx.onFlowThreads(i -> { }); // the agent goes on

            rx.beginStep(1);
            assertThat(rx.endStep().notes()).isEmpty();
        }
    }

    @Test
    @Timeout(60)
    void anErrorThatEndsTheReceiveThreadFailsTheNextCommandAtOnce() throws Exception {
        try (AeronReceiver rx = open(43952)) {
            rx.beginStep(0);
            assertThat(rx.poller().offer(() -> {
                throw new StackOverflowError("deep");
            })).isTrue();
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (System.nanoTime() < deadline) {
                    rx.onFlowThreads(i -> { });
                }
            }).hasMessage("the Aeron lossprobe-aeron-rx thread died: deep");
            assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(5));
            assertThat(rx.endStep().notes()).singleElement().asString().endsWith("the last: deep");
        }
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void closingAStuckReceiveThreadReturnsWithinTheBound() throws Exception {
        AeronReceiver rx = open(43954);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch stuck = new CountDownLatch(1);
        try {
            assertThat(rx.poller().offer(() -> {
                stuck.countDown();
                // Stuck for good: deaf to the interrupts Agrona's close sends.
                while (release.getCount() > 0) {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        // ignored, as a handler stuck in a loop would
                    }
                }
            })).isTrue();
            assertThat(stuck.await(10, TimeUnit.SECONDS)).isTrue();
            long t0 = System.nanoTime();
            rx.close();
            assertThat(System.nanoTime() - t0).isLessThan(Closing.TIMEOUT_NS + TimeUnit.SECONDS.toNanos(3));
        } finally {
            release.countDown();
        }
    }
}
