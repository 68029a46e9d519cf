package io.lossprobe.aeron;

import io.aeron.FragmentAssembler;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.transport.LoopErrors;
import io.lossprobe.core.wire.MessageHeader;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * The receiving agent: polls every flow's subscription in turn and hands each message's header words to the
 * flow's {@link FlowReceiver}. Other threads reach it only through its command queue, which it drains at the
 * start of every cycle, so a command runs between messages. While paused it runs commands but polls nothing, so
 * the images fill and Aeron's flow control back-pressures the publications.
 *
 * <p>Echo mode uses it twice: on the responder with an {@link EchoReplier} per flow (each message the flow says
 * must be answered is sent back from this thread), and on the requester to account the replies
 * ({@link #REPLY_ROLE_NAME}).
 */
final class ReceivePoller implements Agent {
    static final String ROLE_NAME = "lossprobe-aeron-rx";
    /** The requester's reply poller in echo mode. */
    static final String REPLY_ROLE_NAME = "lossprobe-aeron-replies";
    /** Fragments one subscription may deliver per cycle, so no flow starves the others. */
    static final int FRAGMENT_LIMIT = 256;
    private static final long COMMAND_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);

    private final String roleName;
    private final Subscription[] subscriptions;
    private final FragmentHandler[] handlers;
    private final ManyToOneConcurrentArrayQueue<Runnable> commands = new ManyToOneConcurrentArrayQueue<>(64);
    /** What the agent's runner caught, for the step's notes: never printed. */
    private final LoopErrors errors;
    private volatile boolean paused;
    private volatile Thread thread;
    /** The Error that ended the agent's thread (its runner rethrows Errors after handling them), or null. */
    private volatile Throwable fatal;

    ReceivePoller(Subscription[] subscriptions, FlowReceiver[] flows) {
        this(ROLE_NAME, subscriptions, flows, null);
    }

    /**
     * @param repliers per flow, the reply path for the messages the flow says must be answered; null when nothing
     *                 is answered (stream mode, or the requester's own reply poller)
     */
    ReceivePoller(String roleName, Subscription[] subscriptions, FlowReceiver[] flows, EchoReplier[] repliers) {
        this.roleName = roleName;
        this.errors = new LoopErrors("handler", "aeron " + roleName + " thread");
        this.subscriptions = subscriptions;
        this.handlers = new FragmentHandler[subscriptions.length];
        for (int i = 0; i < subscriptions.length; i++) {
            // The assembler passes unfragmented messages straight through and reassembles fragmented ones.
            handlers[i] = new FragmentAssembler(new FlowHandler(flows[i], repliers == null ? null : repliers[i]));
        }
    }

    @Override
    public void onStart() {
        thread = Thread.currentThread();
    }

    @Override
    public int doWork() {
        int work = 0;
        Runnable command;
        while ((command = commands.poll()) != null) {
            command.run();
            work++;
        }
        if (paused) {
            return work;
        }
        for (int i = 0; i < subscriptions.length; i++) {
            work += subscriptions[i].poll(handlers[i], FRAGMENT_LIMIT);
        }
        return work;
    }

    @Override
    public String roleName() {
        return roleName;
    }

    /**
     * The agent runner's error handler: an exception thrown in a cycle (a handler's, a subscription's) is counted
     * and kept for the step's notes, and the agent goes on; an Error ends the thread (the runner rethrows it), and
     * every later command fails at once saying so.
     */
    void onError(Throwable cause) {
        errors.record(0, cause);
        if (cause instanceof Error) {
            fatal = cause;
        }
    }

    LoopErrors errors() {
        return errors;
    }

    /**
     * Runs {@code action} on the agent's thread between messages and waits for it (at once when called from that
     * thread). The agent must be running.
     */
    void runOnAgent(Runnable action) throws Exception {
        if (onAgentThread()) {
            action.run();
            return;
        }
        FutureTask<Void> task = new FutureTask<>(action, null);
        long deadline = System.nanoTime() + COMMAND_TIMEOUT_NS;
        while (!offer(task)) {
            failIfDead();
            if (System.nanoTime() >= deadline) {
                throw new IllegalStateException("the Aeron " + roleName + " thread did not take a command within 30 s");
            }
            Thread.onSpinWait();
        }
        while (true) {
            failIfDead();
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IllegalStateException("the Aeron " + roleName + " thread did not run a command within 30 s");
            }
            try {
                task.get(Math.min(left, DEAD_CHECK_NS), TimeUnit.NANOSECONDS);
                return;
            } catch (java.util.concurrent.TimeoutException e) {
                // look again whether the thread is still there
            }
        }
    }

    private static final long DEAD_CHECK_NS = TimeUnit.MILLISECONDS.toNanos(100);

    private void failIfDead() {
        Throwable f = fatal;
        Thread t = thread;
        if (f != null || (t != null && !t.isAlive())) {
            throw new IllegalStateException("the Aeron " + roleName + " thread died"
                + (f == null ? "" : ": " + LoopErrors.describe(f)));
        }
    }

    /**
     * Closes {@code runner} waiting at most until {@code deadlineNs}: Agrona's own close retries without end while
     * the agent's thread does not stop (stuck in a handler), printing as it goes. A thread still stuck then is
     * left to the process's exit.
     */
    static void close(AgentRunner runner, long deadlineNs) {
        if (runner == null) {
            return;
        }
        try {
            runner.close(CLOSE_RETRY_MS, stuck -> {
                if (System.nanoTime() >= deadlineNs) {
                    throw new GaveUp();
                }
            });
        } catch (GaveUp e) {
            // Bounded, as promised: nothing more to do for a thread that does not stop.
        }
    }

    private static final int CLOSE_RETRY_MS = 100;

    /**
     * Starts {@code runner} on a daemon thread whose uncaught Error is not printed: the runner handed it to
     * {@link #onError} first, which keeps it for the step's notes and the next command's failure.
     */
    static void start(AgentRunner runner) {
        AgentRunner.startOnThread(runner, r -> {
            Thread t = new Thread(r);
            t.setDaemon(true);
            t.setUncaughtExceptionHandler((thread, e) -> { });
            return t;
        });
    }

    /** Ends Agrona's close retries once the deadline passed. */
    private static final class GaveUp extends RuntimeException {
        GaveUp() {
            super(null, null, false, false);
        }
    }

    /** Queues {@code command} for the agent's thread; false when the queue is full. */
    boolean offer(Runnable command) {
        return commands.offer(command);
    }

    boolean onAgentThread() {
        return Thread.currentThread() == thread;
    }

    void paused(boolean paused) {
        this.paused = paused;
    }

    /** Reads the six header words big-endian, as {@link MessageHeader} defines them. */
    private record FlowHandler(FlowReceiver flow, EchoReplier replier) implements FragmentHandler {
        @Override
        public void onFragment(DirectBuffer buffer, int offset, int length, Header header) {
            long now = System.nanoTime();
            if (length < MessageHeader.LENGTH) {
                flow.onMessage(0, 0, 0, 0, 0, 0, length, now);
                return;
            }
            long word0 = AgronaHeaders.get(buffer, offset, MessageHeader.WORD0_OFFSET);
            long word1 = AgronaHeaders.get(buffer, offset, MessageHeader.WORD1_OFFSET);
            long sequence = AgronaHeaders.get(buffer, offset, MessageHeader.SEQUENCE_OFFSET);
            long sendTimeNs = AgronaHeaders.get(buffer, offset, MessageHeader.SEND_TIME_OFFSET);
            long actualNs = AgronaHeaders.get(buffer, offset, MessageHeader.ACTUAL_SEND_TIME_OFFSET);
            long tag = AgronaHeaders.get(buffer, offset, MessageHeader.TAG_OFFSET);
            if (flow.onMessage(word0, word1, sequence, sendTimeNs, actualNs, tag, length, now) && replier != null) {
                replier.reply(word0, word1, sequence, sendTimeNs, actualNs);
            }
        }
    }
}
