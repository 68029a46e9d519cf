package io.lossprobe.control;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Write timeouts for control connections: a blocking socket write has none, so a peer that stops reading would
 * hold the writing thread (a server's session, a controller's run) forever. One daemon thread checks every
 * {@value #SWEEP_MS} ms and closes a connection whose write has blocked past its timeout.
 */
final class WriteWatchdog {
    static final long SWEEP_MS = 50;
    private static final Set<FrameChannel> CHANNELS = ConcurrentHashMap.newKeySet();
    private static ScheduledExecutorService sweeper;

    private WriteWatchdog() {
    }

    static void watch(FrameChannel channel) {
        CHANNELS.add(channel);
        synchronized (WriteWatchdog.class) {
            if (sweeper == null) {
                sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "lossprobe-control-watchdog");
                    t.setDaemon(true);
                    return t;
                });
                sweeper.scheduleWithFixedDelay(WriteWatchdog::sweep, SWEEP_MS, SWEEP_MS, TimeUnit.MILLISECONDS);
            }
        }
    }

    static void unwatch(FrameChannel channel) {
        CHANNELS.remove(channel);
    }

    private static void sweep() {
        long now = System.nanoTime();
        for (FrameChannel c : CHANNELS) {
            if (c.writeOverdue(now)) {
                c.abort("the peer took nothing for " + c.writeTimeoutMs() + " ms (write timeout): closed");
            }
        }
    }
}
