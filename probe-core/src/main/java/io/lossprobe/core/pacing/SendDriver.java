package io.lossprobe.core.pacing;

import io.lossprobe.core.transport.SendPacing;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs a {@link SendLoop} on a transport's single sending thread, one {@code doWork} per task, so the thread stays
 * free for the transport's own completions between cycles. The one send driver of every transport: when the next
 * cycle starts is {@link #nextCycleNs}, a pure function of the loop, the transport's {@link SendPacing} and the
 * injected clock.
 */
public final class SendDriver {
    private SendDriver() {
    }

    /** Drives {@code loop} on {@code executor} until it is done; the future fails if {@code doWork} throws. */
    public static CompletableFuture<Void> drive(SendLoop loop, ScheduledExecutorService executor, SendPacing pacing,
                                                NanoClock clock) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        long fullCycle = (long) loop.flows() * pacing.fullBatchPerFlow();
        executor.execute(new Runnable() {
            @Override
            public void run() {
                try {
                    long cycleStart = clock.nanoTime();
                    int sent = loop.doWork(cycleStart);
                    if (loop.isDone()) {
                        done.complete(null);
                        return;
                    }
                    long now = clock.nanoTime();
                    long wait = nextCycleNs(loop, sent, fullCycle, cycleStart, now, pacing) - now;
                    if (wait <= pacing.spinNs()) {
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

    /**
     * When the next cycle should start, given a cycle that began at {@code cycleStartNs} and handed {@code sent}
     * messages to the transport. A cycle that was full on every flow is behind: the next runs when due (now). Else
     * the next runs when something falls due, but no sooner than the minimum cycle after this one began. When
     * something was due yet nothing was taken (every due flow blocked), it backs off instead of spinning.
     */
    static long nextCycleNs(SendLoop loop, int sent, long fullCycle, long cycleStartNs, long nowNs,
                            SendPacing pacing) {
        long nextDue = loop.nextDueNs(nowNs);
        if (sent >= fullCycle) {
            return nextDue;
        }
        long wakeAt = Math.max(nextDue, cycleStartNs + pacing.minCycleNs());
        if (sent == 0 && wakeAt <= nowNs) {
            return nowNs + pacing.blockedBackoffNs();
        }
        return wakeAt;
    }
}
