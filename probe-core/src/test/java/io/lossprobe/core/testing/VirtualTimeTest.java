package io.lossprobe.core.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The virtual clock and its executor: time order, when tasks run, what a wait does, and the misuses it catches. */
class VirtualTimeTest {
    private final VirtualTime time = new VirtualTime(1_000);
    private final ScheduledExecutorService executor = time.executor();
    private final List<String> ran = new ArrayList<>();

    private Runnable note(String what) {
        return () -> ran.add(what + "@" + time.nanoTime());
    }

    @Test
    void tasksRunInTimeOrderTiesInQueueOrderAndOnlyWhileTheOwnerWaits() {
        executor.schedule(note("b"), 20, TimeUnit.NANOSECONDS);
        executor.schedule(note("a"), 10, TimeUnit.NANOSECONDS);
        executor.execute(note("now1"));
        executor.schedule(note("c"), 20, TimeUnit.NANOSECONDS);
        executor.execute(note("now2"));
        assertThat(ran).as("nothing runs inside the call that queued it").isEmpty();
        time.parkNanos(15);
        assertThat(ran).containsExactly("now1@1000", "now2@1000", "a@1010");
        assertThat(time.nanoTime()).isEqualTo(1_015);
        time.parkNanos(5);
        assertThat(ran).endsWith("b@1020", "c@1020").as("a wait runs what is due at its deadline too");
        assertThat(time.pending()).isZero();
    }

    @Test
    void awaitStopsWhenTheFutureCompletesElseAtTheDeadline() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        executor.schedule(() -> done.complete(null), 300, TimeUnit.NANOSECONDS);
        executor.schedule(note("later"), 400, TimeUnit.NANOSECONDS);
        assertThat(time.await(done, 100)).isFalse();
        assertThat(time.nanoTime()).isEqualTo(1_100);
        assertThat(time.await(done, 1_000)).isTrue();
        assertThat(time.nanoTime()).as("where the future completed").isEqualTo(1_300);
        assertThat(ran).isEmpty();
        assertThat(time.await(new CompletableFuture<>(), 1_000)).isFalse();
        assertThat(ran).containsExactly("later@1400");
        assertThat(time.nanoTime()).isEqualTo(2_300);
    }

    @Test
    void getOnATaskDrivesTimeAndATimedGetTimesOutInVirtualTime() throws Exception {
        Future<Long> later = executor.schedule(time::nanoTime, 5, TimeUnit.SECONDS);
        assertThatThrownBy(() -> later.get(1, TimeUnit.SECONDS)).isInstanceOf(TimeoutException.class);
        assertThat(time.nanoTime()).isEqualTo(1_000 + TimeUnit.SECONDS.toNanos(1));
        assertThat(later.get()).isEqualTo(1_000 + TimeUnit.SECONDS.toNanos(5));
        assertThat(executor.submit(() -> 42).get()).isEqualTo(42);
        ScheduledFuture<?> beyondTheLimit = executor.schedule(() -> { }, 2, TimeUnit.HOURS);
        assertThatThrownBy(beyondTheLimit::get).as("a get() nothing completes fails, it does not hang")
            .hasMessageContaining("nothing queued completes");
    }

    @Test
    void periodicTasksKeepTheirRateAndStopWhenCancelled() {
        ScheduledFuture<?> tick = executor.scheduleAtFixedRate(note("t"), 10, 10, TimeUnit.NANOSECONDS);
        time.parkNanos(35);
        assertThat(ran).containsExactly("t@1010", "t@1020", "t@1030");
        tick.cancel(false);
        time.parkNanos(100);
        assertThat(ran).hasSize(3);
        executor.scheduleWithFixedDelay(() -> {
            ran.add("d@" + time.nanoTime());
            time.spend(3);
        }, 0, 10, TimeUnit.NANOSECONDS);
        time.parkNanos(30);
        assertThat(ran.subList(3, ran.size())).containsExactly("d@1135", "d@1148", "d@1161");
    }

    @Test
    void spentTimeDelaysWhatFellDueMeanwhile() {
        executor.schedule(note("due"), 10, TimeUnit.NANOSECONDS);
        executor.execute(() -> time.spend(50));
        time.runDue();
        assertThat(time.nanoTime()).isEqualTo(1_050);
        assertThat(ran).isEmpty();
        time.runDue();
        assertThat(ran).containsExactly("due@1050");
    }

    @Test
    void aTaskThatWaitsFailsLoudly() {
        executor.execute(() -> time.parkNanos(10));
        assertThatThrownBy(time::runDue).hasMessageContaining("a task on virtual time failed")
            .hasRootCauseMessage("a task waited on virtual time: on a real single sending thread that wait would "
                + "stall every other task of the thread");
        assertThat(time.taskFailures()).hasSize(1);
    }

    @Test
    void useFromAnotherThreadIsRefused() throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread other = new Thread(() -> {
            try {
                executor.execute(() -> { });
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        other.start();
        other.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(failure.get()).hasMessageContaining("a real thread crept into the code under test");
    }

    @Test
    void somethingThatRequeuesItselfAtOnceForeverIsALivelock() {
        Runnable spin = new Runnable() {
            @Override
            public void run() {
                executor.execute(this);
            }
        };
        executor.execute(spin);
        assertThatThrownBy(() -> time.parkNanos(1)).hasMessageContaining("without time moving");
    }
}
