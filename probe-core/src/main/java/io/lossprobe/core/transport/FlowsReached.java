package io.lossprobe.core.transport;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.IntStream;

/**
 * Which flows' receivers have reached their senders so far ({@link SenderEndpoint#awaitPunches}): marked on the
 * thread that verifies a punch, awaited on the engine's, both before any step.
 */
public final class FlowsReached {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final boolean[] reached;

    public FlowsReached(int flows) {
        this.reached = new boolean[flows];
    }

    /** Marks flow {@code flow} reached; returns false when it was already. */
    public boolean mark(int flow) {
        lock.lock();
        try {
            if (reached[flow]) {
                return false;
            }
            reached[flow] = true;
            changed.signalAll();
            return true;
        } finally {
            lock.unlock();
        }
    }

    public boolean has(int flow) {
        lock.lock();
        try {
            return reached[flow];
        } finally {
            lock.unlock();
        }
    }

    /** The flows not reached yet, in order. */
    public int[] missing() {
        lock.lock();
        try {
            return IntStream.range(0, reached.length).filter(i -> !reached[i]).toArray();
        } finally {
            lock.unlock();
        }
    }

    /** Waits until every flow is reached or {@code timeoutNs} passed; returns the flows not reached. */
    public int[] await(long timeoutNs) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNs;
        lock.lock();
        try {
            while (missing().length > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                changed.awaitNanos(left);
            }
            return missing();
        } finally {
            lock.unlock();
        }
    }
}
