package io.lossprobe.aeron;

import io.aeron.FragmentAssembler;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.wire.MessageHeader;
import java.nio.ByteOrder;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;
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
    private volatile boolean paused;
    private volatile Thread thread;

    ReceivePoller(Subscription[] subscriptions, FlowReceiver[] flows) {
        this(ROLE_NAME, subscriptions, flows, null);
    }

    /**
     * @param repliers per flow, the reply path for the messages the flow says must be answered; null when nothing
     *                 is answered (stream mode, or the requester's own reply poller)
     */
    ReceivePoller(String roleName, Subscription[] subscriptions, FlowReceiver[] flows, EchoReplier[] repliers) {
        this.roleName = roleName;
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
            if (System.nanoTime() >= deadline) {
                throw new IllegalStateException("the Aeron " + roleName + " thread did not take a command within 30 s");
            }
            Thread.onSpinWait();
        }
        task.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
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
    private static final class FlowHandler implements FragmentHandler {
        private final FlowReceiver flow;
        private final EchoReplier replier;

        FlowHandler(FlowReceiver flow, EchoReplier replier) {
            this.flow = flow;
            this.replier = replier;
        }

        @Override
        public void onFragment(DirectBuffer buffer, int offset, int length, Header header) {
            long now = System.nanoTime();
            if (length < MessageHeader.LENGTH) {
                flow.onMessage(0, 0, 0, 0, 0, 0, length, now);
                return;
            }
            long word0 = buffer.getLong(offset + MessageHeader.WORD0_OFFSET, ByteOrder.BIG_ENDIAN);
            long word1 = buffer.getLong(offset + MessageHeader.WORD1_OFFSET, ByteOrder.BIG_ENDIAN);
            long sequence = buffer.getLong(offset + MessageHeader.SEQUENCE_OFFSET, ByteOrder.BIG_ENDIAN);
            long sendTimeNs = buffer.getLong(offset + MessageHeader.SEND_TIME_OFFSET, ByteOrder.BIG_ENDIAN);
            long actualNs = buffer.getLong(offset + MessageHeader.ACTUAL_SEND_TIME_OFFSET, ByteOrder.BIG_ENDIAN);
            long tag = buffer.getLong(offset + MessageHeader.TAG_OFFSET, ByteOrder.BIG_ENDIAN);
            if (flow.onMessage(word0, word1, sequence, sendTimeNs, actualNs, tag, length, now) && replier != null) {
                replier.reply(word0, word1, sequence, sendTimeNs, actualNs);
            }
        }
    }
}
