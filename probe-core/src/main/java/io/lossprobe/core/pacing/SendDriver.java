package io.lossprobe.core.pacing;

import io.lossprobe.core.transport.SendPacing;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs a {@link SendLoop} on a transport's single sending thread, one {@code doWork} per task, so the thread stays
 * free for the transport's own completions between cycles. The one send driver of every transport: when the next
 * cycle starts is {@link #nextCycleNs}, a pure function of the loop, the transport's {@link SendPacing} and the
 * injected clock. A timer is armed only for waits longer than the pacing's spin, and with an early wake-up ahead of
 * when the cycle is due; what is left is spun (the cycle queued again at once until it is due).
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
                    long now = clock.nanoTime();
                    loop.cycleEnded(now);
                    if (loop.isDone()) {
                        done.complete(null);
                        return;
                    }
                    long timer = pacing.timerNs(nextCycleNs(loop, sent, fullCycle, cycleStart, now, pacing) - now);
                    if (timer == 0) {
                        executor.execute(this); // due within the spin: look again at once
                    } else {
                        executor.schedule(this, timer, TimeUnit.NANOSECONDS);
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
        // Blocked only when something was due as the cycle began: a cycle that began just before a message fell due
        // sent nothing because nothing was due yet (a spin turn straddling the intended time), and must not wait.
        if (sent == 0 && wakeAt <= nowNs && loop.nextDueNs(cycleStartNs) <= cycleStartNs) {
            return nowNs + pacing.blockedBackoffNs();
        }
        return wakeAt;
    }
}
