package io.lossprobe.core.testing;

import io.lossprobe.core.pacing.NanoClock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Virtual time for deterministic tests of the engine: a {@link NanoClock} whose time moves only when someone waits
 * on it, and a single-threaded {@link ScheduledExecutorService} on that time ({@link #executor()}).
 *
 * <p>Everything runs on the thread that created it (the test's): a queued task runs only while that thread waits
 * through the clock ({@link #parkNanos}, {@link #await}, or {@code get} on a task's future), in time order, ties in
 * the order they were queued; an immediate task ({@code execute}, {@code submit}) is due now and runs at the next
 * wait, never inside the call that queued it. Waiting jumps the clock from one due task to the next, so a run of
 * minutes takes milliseconds. A task takes no virtual time unless it {@link #spend spends} some, and must not wait
 * itself: on a real single sending thread that wait would stall every other task, so it throws instead.
 *
 * <p>A wait runs every task due at or before its deadline (inclusive): when the engine and a send cycle are due at
 * the same instant, the send cycle runs first.
 */
public final class VirtualTime implements NanoClock {
    /** Tasks at one instant before it is called a livelock: something re-queues itself and time never moves. */
    static final long LIVELOCK_TASKS = 100_000;
    /** How far {@code get()} on a task's future drives time before giving up. */
    static final long GET_LIMIT_NS = TimeUnit.HOURS.toNanos(1);

    private final Thread owner = Thread.currentThread();
    private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
    private final Executor executor = new Executor();
    private final List<Throwable> taskFailures = new ArrayList<>();
    private volatile long nowNs;
    private long queued;
    private long tasksRun;
    private long tasksThisInstant;
    private boolean inTask;

    public VirtualTime() {
        this(0);
    }

    /** @param startNs the clock's first reading (a real clock's origin is arbitrary too) */
    public VirtualTime(long startNs) {
        this.nowNs = startNs;
    }

    @Override
    public long nanoTime() {
        return nowNs;
    }

    /** Runs every task due within {@code ns}, then moves the clock to {@code now + ns}. */
    @Override
    public void parkNanos(long ns) {
        checkWaitAllowed();
        long deadline = deadline(ns);
        runUntil(deadline, null);
        advanceTo(deadline);
    }

    /**
     * Runs due tasks in time order until {@code future} completes (the clock stays at the moment it did) or the next
     * task lies beyond the timeout (the clock moves to the deadline).
     */
    @Override
    public boolean await(Future<?> future, long timeoutNs) {
        checkWaitAllowed();
        if (future.isDone()) {
            return true;
        }
        long deadline = deadline(timeoutNs);
        runUntil(deadline, future);
        if (future.isDone()) {
            return true;
        }
        advanceTo(deadline);
        return false;
    }

    /** Runs the tasks due now: {@code parkNanos(0)}. */
    public void runDue() {
        parkNanos(0);
    }

    /**
     * The running code takes {@code ns} of virtual time (a busy thread): the clock moves, and nothing else runs
     * meanwhile; tasks that fell due run at the next wait, late. Allowed inside a task.
     */
    public void spend(long ns) {
        checkOwner();
        if (ns < 0) {
            throw new IllegalArgumentException("negative time: " + ns);
        }
        advanceTo(deadline(ns));
    }

    /** The single-threaded executor on this time; it runs only while the owner thread waits on the clock. */
    public ScheduledExecutorService executor() {
        return executor;
    }

    /** True while a task of {@link #executor()} runs (e.g. a send cycle). */
    public boolean inTask() {
        return inTask;
    }

    /** Tasks queued and not cancelled. */
    public int pending() {
        int n = 0;
        for (Task<?> t : queue) {
            if (!t.isCancelled()) {
                n++;
            }
        }
        return n;
    }

    /** Tasks run so far. */
    public long tasksRun() {
        return tasksRun;
    }

    /** Exceptions thrown by tasks so far, in order (those of {@code execute}d tasks are also rethrown). */
    public List<Throwable> taskFailures() {
        return Collections.unmodifiableList(taskFailures);
    }

    /**
     * Queues {@code action} at virtual time {@code atNs} (now when earlier); an exception it throws propagates
     * out of the wait that runs it, as an uncaught exception would end a real thread.
     */
    public void at(long atNs, Runnable action) {
        checkOwner();
        enqueue(new Task<Void>(Math.max(atNs, nowNs), 0, true, action, null));
    }

    private long deadline(long ns) {
        long deadline = nowNs + Math.max(0, ns);
        if (deadline < nowNs) {
            throw new IllegalArgumentException("a wait of " + ns + " ns overflows virtual time");
        }
        return deadline;
    }

    private void advanceTo(long t) {
        if (t > nowNs) {
            nowNs = t;
            tasksThisInstant = 0;
        }
    }

    private void runUntil(long deadline, Future<?> until) {
        while (until == null || !until.isDone()) {
            Task<?> next = queue.peek();
            if (next == null || next.timeNs > deadline) {
                return;
            }
            queue.poll();
            if (next.isCancelled()) {
                continue;
            }
            advanceTo(next.timeNs); // a task that fell due while the thread was busy runs late, at now
            if (++tasksThisInstant > LIVELOCK_TASKS) {
                throw new IllegalStateException(LIVELOCK_TASKS + " tasks ran at virtual time " + nowNs
                    + " ns without time moving: something re-queues itself at once forever (a spin, or a loop "
                    + "sending at max rate with no cost per message)");
            }
            run(next);
        }
    }

    private void run(Task<?> task) {
        inTask = true;
        try {
            task.run();
        } finally {
            inTask = false;
            tasksRun++;
        }
        if (task.rethrow && task.failure != null) {
            throw new IllegalStateException("a task on virtual time failed: " + task.failure, task.failure);
        }
    }

    /** Drives time until {@code task} completes (what a blocking {@code get()} does on a real executor). */
    private void drive(Task<?> task) {
        checkWaitAllowed();
        runUntil(deadline(GET_LIMIT_NS), task);
        if (!task.isDone()) {
            throw new IllegalStateException("get() on a task that nothing queued completes within "
                + GET_LIMIT_NS / 1_000_000_000L + " s of virtual time");
        }
    }

    private void checkOwner() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("virtual time belongs to thread " + owner.getName() + ", not "
                + Thread.currentThread().getName() + ": a real thread crept into the code under test");
        }
    }

    private void checkWaitAllowed() {
        checkOwner();
        if (inTask) {
            throw new IllegalStateException("a task waited on virtual time: on a real single sending thread that "
                + "wait would stall every other task of the thread");
        }
    }

    private <T> Task<T> enqueue(Task<T> task) {
        checkOwner();
        if (executor.shutdown) {
            throw new RejectedExecutionException("the virtual executor is shut down");
        }
        task.sequence = queued++;
        queue.add(task);
        return task;
    }

    /** A queued task: due at {@link #timeNs}; periodic when {@link #periodNs} is not 0 (negative: fixed delay). */
    private final class Task<V> extends FutureTask<V> implements RunnableScheduledFuture<V> {
        private long timeNs;
        private long sequence;
        private final long periodNs;
        private final boolean rethrow;
        private Throwable failure;

        Task(long timeNs, long periodNs, boolean rethrow, Runnable action, V result) {
            super(action, result);
            this.timeNs = timeNs;
            this.periodNs = periodNs;
            this.rethrow = rethrow;
        }

        Task(long timeNs, Callable<V> action) {
            super(action);
            this.timeNs = timeNs;
            this.periodNs = 0;
            this.rethrow = false;
        }

        @Override
        public void run() {
            if (periodNs == 0) {
                super.run();
                return;
            }
            if (runAndReset() && !isCancelled() && !executor.shutdown) {
                timeNs = periodNs > 0 ? timeNs + periodNs : nowNs - periodNs;
                enqueue(this);
            }
        }

        @Override
        protected void setException(Throwable t) {
            failure = t;
            taskFailures.add(t);
            super.setException(t);
        }

        VirtualTime time() {
            return VirtualTime.this;
        }

        @Override
        public boolean isPeriodic() {
            return periodNs != 0;
        }

        @Override
        public V get() throws InterruptedException, ExecutionException {
            if (!isDone()) {
                drive(this);
            }
            return super.get();
        }

        @Override
        public V get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException,
            TimeoutException {
            if (!isDone() && !await(this, unit.toNanos(timeout))) {
                throw new TimeoutException("not done within " + unit.toNanos(timeout) + " ns of virtual time");
            }
            return super.get();
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(timeNs - nowNs, TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            if (other instanceof VirtualTime.Task<?> t) {
                int byTime = Long.compare(timeNs, t.timeNs);
                return byTime != 0 ? byTime : Long.compare(sequence, t.sequence);
            }
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }
    }

    /** The executor on this time: tasks go into the one queue the owner thread's waits drain. */
    private final class Executor extends AbstractExecutorService implements ScheduledExecutorService {
        private boolean shutdown;

        @Override
        protected <T> RunnableFuture<T> newTaskFor(Runnable runnable, T value) {
            return new Task<>(nowNs, 0, false, runnable, value);
        }

        @Override
        protected <T> RunnableFuture<T> newTaskFor(Callable<T> callable) {
            return new Task<>(nowNs, callable);
        }

        @Override
        public void execute(Runnable command) {
            if (command instanceof VirtualTime.Task<?> t && t.time() == VirtualTime.this) {
                enqueue(t); // from submit(): its future reports the failure
            } else {
                enqueue(new Task<Void>(nowNs, 0, true, command, null));
            }
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            return enqueue(new Task<Void>(nowNs + Math.max(0, unit.toNanos(delay)), 0, false, command, null));
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            return enqueue(new Task<>(nowNs + Math.max(0, unit.toNanos(delay)), callable));
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period,
                                                      TimeUnit unit) {
            if (period <= 0) {
                throw new IllegalArgumentException("period must be positive");
            }
            return enqueue(new Task<Void>(nowNs + Math.max(0, unit.toNanos(initialDelay)), unit.toNanos(period),
                false, command, null));
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay,
                                                         TimeUnit unit) {
            if (delay <= 0) {
                throw new IllegalArgumentException("delay must be positive");
            }
            return enqueue(new Task<Void>(nowNs + Math.max(0, unit.toNanos(initialDelay)), -unit.toNanos(delay),
                false, command, null));
        }

        @Override
        public void shutdown() {
            shutdown = true;
        }

        @Override
        public List<Runnable> shutdownNow() {
            shutdown = true;
            List<Runnable> left = new ArrayList<>(queue);
            queue.clear();
            return left;
        }

        @Override
        public boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return shutdown && queue.isEmpty();
        }

        /** Nothing runs on its own here, so there is nothing to wait for. */
        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return isTerminated();
        }
    }
}
