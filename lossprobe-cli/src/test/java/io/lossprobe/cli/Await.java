package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits for a condition with a deadline, polling every 20 ms; tests never sleep a fixed time. */
final class Await {
    private Await() {
    }

    /** Returns once {@code condition} holds; fails after {@code timeoutMs} with {@code what} and {@code detail}. */
    static void until(String what, long timeoutMs, BooleanSupplier condition, Supplier<String> detail) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("%s within %d ms:%n%s", what, timeoutMs, detail.get())
                .isLessThan(deadline);
            LockSupport.parkNanos(20_000_000L);
        }
    }
}
