package io.lossprobe.core.pacing;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs a {@link SendLoop} as a task on a single-threaded scheduled executor (a Netty event loop, say): one
 * {@code doWork} per run, then again at once when the next message is due within {@link #SPIN_NS}, else on a
 * timer at the next due time. When messages are overdue yet no flow took one (every due flow is blocked), it waits
 * {@link #BLOCKED_BACKOFF_NS} instead of spinning on the executor.
 */
public final class SendLoopDriver {
    /** Below this the loop runs again at once instead of arming a timer. */
    public static final long SPIN_NS = 10_000;
    /** Back-off when everything due is blocked (not writable). */
    public static final long BLOCKED_BACKOFF_NS = 50_000;

    private SendLoopDriver() {
    }

    /** Drives {@code loop} on {@code executor} until it is done; the future fails if {@code doWork} throws. */
    public static CompletableFuture<Void> drive(SendLoop loop, ScheduledExecutorService executor) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        executor.execute(new Runnable() {
            @Override
            public void run() {
                try {
                    int work = loop.doWork(System.nanoTime());
                    if (loop.isDone()) {
                        done.complete(null);
                        return;
                    }
                    long now = System.nanoTime();
                    long wait = loop.nextDueNs(now) - now;
                    if (work == 0 && wait <= 0) {
                        wait = BLOCKED_BACKOFF_NS;
                    }
                    if (wait <= SPIN_NS) {
                        executor.execute(this);
                    } else {
                        executor.schedule(this, wait, TimeUnit.NANOSECONDS);
                    }
                } catch (Throwable t) {
                    done.completeExceptionally(t);
                }
            }
        });
        return done;
    }
}
