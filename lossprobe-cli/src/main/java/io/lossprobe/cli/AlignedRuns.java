package io.lossprobe.cli;

import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.result.RunResult;
import java.io.IOException;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Two runs at once whose steps start together: each step of either waits, just before its window, for the same
 * step of the other ({@code run --bidir}: the two directions; {@code run --probe}: the stream and its echo probe).
 * A run that fails stops the other.
 */
final class AlignedRuns {
    /** The longest one run's step waits for the other's to be set up. */
    static final long ALIGN_TIMEOUT_MS = 60_000;

    private final CyclicBarrier starts = new CyclicBarrier(2);

    /** The hooks each of the two runs' engines takes: its steps wait here for the other's. */
    StepHooks hooks() {
        return new StepHooks() {
            @Override
            public void beforeStart(String transport, int step) throws Exception {
                try {
                    starts.await(ALIGN_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                } catch (BrokenBarrierException | TimeoutException e) {
                    starts.reset();
                    throw new IOException(transport + " step " + step + ": the run beside it did not start the "
                        + "same step (it failed or stopped)");
                }
            }
        };
    }

    /** Runs both at once: their results in order, or the first one's failure (the other stopped). */
    RunResult[] run(RunEngine first, RunEngine second) throws Exception {
        CompletableFuture<RunResult> a = CompletableFuture.supplyAsync(() -> runOne(first, second));
        CompletableFuture<RunResult> b = CompletableFuture.supplyAsync(() -> runOne(second, first));
        RunResult ra = join(a);
        RunResult rb = join(b);
        return new RunResult[] {ra, rb};
    }

    private RunResult runOne(RunEngine mine, RunEngine other) {
        try {
            return mine.run();
        } catch (Exception e) {
            other.requestStop();
            starts.reset(); // the other run, waiting for this one's next step, gives up at once
            throw new CompletionException(e);
        }
    }

    private static RunResult join(CompletableFuture<RunResult> f) throws Exception {
        try {
            return f.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof CompletionException c && c.getCause() != null
                ? c.getCause() : e.getCause();
            if (cause instanceof Exception ex) {
                throw ex;
            }
            throw e;
        }
    }
}
