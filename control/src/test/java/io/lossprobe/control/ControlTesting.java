package io.lossprobe.control;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** What the control plane's tests share: a secret, limits that keep tests short, plans, and transports that move
 * nothing. */
final class ControlTesting {
    static final Auth AUTH = Auth.ofSecret("correct horse battery staple");
    /** Short timeouts so tests that wait for them stay short; room for several sessions. */
    static final ServerLimits LIMITS = ServerLimits.DEFAULTS.withSessions(8).withTimeouts(1_000, 5_000, 1_000)
        .withPlanLimits(1_000_000, 64, TimeUnit.SECONDS.toNanos(60), 256, TimeUnit.HOURS.toNanos(1), 256L << 20,
            1L << 30);

    private ControlTesting() {
    }

    static Plan plan(int basePort) {
        return new Plan(List.of("udp"), 4, basePort, List.of(Level.parse("1k")), 1_000_000_000L, 0, 1_000_000_000L,
            64, "127.0.0.1");
    }

    static Supplier<Map<String, Transport>> only(Transport t) {
        return () -> Map.of(t.name(), t);
    }

    /** Waits for {@code condition} up to {@code timeoutMs}; fails the test with {@code what} if it never holds. */
    static void await(String what, long timeoutMs, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(what + ": not within " + timeoutMs + " ms");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    /** Options the test transports declare: one a server takes, one it does not. */
    static final TransportOption<String> IO = TransportOption.choice("udp.io", "auto", "io", "auto", "epoll", "nio");
    static final TransportOption<String> LOCAL_PATH = TransportOption.text("udp.localPath", "none", "a path")
        .localOnly();
    static final TransportOption<Long> THREADS = TransportOption.number("udp.rxThreads", 2, 1, 64, "threads");

    /** Never opened: tests that stop before any receiver is bound. */
    static class NoTransport implements Transport {
        @Override
        public String name() {
            return "udp";
        }

        @Override
        public List<TransportOption<?>> options() {
            return List.of(IO, LOCAL_PATH, THREADS);
        }

        @Override
        public ReceiverEndpoint openReceiver(ReceiverSpec spec) throws Exception {
            throw new UnsupportedOperationException("no receivers in this test");
        }

        @Override
        public SenderEndpoint openSender(SenderSpec spec) throws Exception {
            throw new UnsupportedOperationException("no senders in this test");
        }
    }

    /**
     * Opens receivers that move nothing and senders whose writers take every message and send nothing (on a thread
     * of their own); counts both open, remembers the last receiver spec.
     */
    static final class CountingTransport extends NoTransport {
        final AtomicInteger open = new AtomicInteger();
        final AtomicInteger senders = new AtomicInteger();

        @Override
        public SenderEndpoint openSender(SenderSpec spec) {
            senders.incrementAndGet();
            java.util.concurrent.ScheduledExecutorService executor =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "discarding-sender");
                    t.setDaemon(true);
                    return t;
                });
            return new SenderEndpoint() {
                @Override
                public io.lossprobe.core.transport.MessageWriter writer(int flow) {
                    return new io.lossprobe.core.transport.MessageWriter() {
                        @Override
                        public int write(long word0, long word1, long sequence, long intendedNs, long actualNs,
                                         long tag) {
                            return ACCEPTED;
                        }

                        @Override
                        public void flush() {
                        }
                    };
                }

                @Override
                public java.util.concurrent.ScheduledExecutorService sendExecutor() {
                    return executor;
                }

                @Override
                public void close() {
                    executor.shutdownNow();
                    senders.decrementAndGet();
                }
            };
        }
        final AtomicReference<ReceiverSpec> lastSpec = new AtomicReference<>();

        @Override
        public ReceiverEndpoint openReceiver(ReceiverSpec spec) {
            open.incrementAndGet();
            lastSpec.set(spec);
            return new ReceiverEndpoint() {
                @Override
                public void onFlowThreads(java.util.function.IntConsumer action) {
                    for (int i = 0; i < spec.flows().length; i++) {
                        action.accept(i);
                    }
                }

                @Override
                public void setPaused(boolean paused) {
                }

                @Override
                public void close() {
                    open.decrementAndGet();
                }
            };
        }
    }
}
