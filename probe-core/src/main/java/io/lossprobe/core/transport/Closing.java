package io.lossprobe.core.transport;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Bounded waits for closing an endpoint. An event loop that died (its thread stuck in a handler, or already shut
 * down) must neither hang the end of a run nor fail a run whose steps are all measured: closing waits at most
 * {@link #TIMEOUT_NS} in all, and a close that failed or did not finish is left to the process's exit.
 */
public final class Closing {
    /** The most one endpoint's close waits for its loops. */
    public static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);

    private Closing() {
    }

    /** A deadline {@link #TIMEOUT_NS} from now, for {@link #await}. */
    public static long deadline() {
        return System.nanoTime() + TIMEOUT_NS;
    }

    /**
     * Starts closing every resource (a channel: {@code close} returns the future that completes when it is
     * closed), then waits for them all, then starts {@code shutdown} (its event loops) and waits for that, all
     * within one {@link #TIMEOUT_NS}. Never throws: a close that cannot even start (its loop refuses the task) has
     * nothing to wait for.
     */
    public static <T> void closeAll(Collection<T> resources, Function<T, Future<?>> close,
                                    Supplier<Future<?>> shutdown) {
        long deadline = deadline();
        List<Future<?>> closing = new ArrayList<>(resources.size());
        for (T r : resources) {
            try {
                closing.add(close.apply(r));
            } catch (RuntimeException e) {
                // Nothing started, nothing to wait for.
            }
        }
        for (Future<?> f : closing) {
            await(f, deadline);
        }
        try {
            await(shutdown.get(), deadline);
        } catch (RuntimeException e) {
            // As above.
        }
    }

    /**
     * Waits for {@code future} until {@code deadlineNs} ({@link System#nanoTime} time) and never throws; returns
     * whether it completed in time (failed or not: a close that failed because its loop is gone has nothing left to
     * wait for).
     */
    public static boolean await(Future<?> future, long deadlineNs) {
        try {
            future.get(Math.max(0, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
            return true;
        } catch (ExecutionException | java.util.concurrent.CancellationException e) {
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
