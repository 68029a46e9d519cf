package io.lossprobe.aeron;

import io.aeron.FragmentAssembler;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.wire.MessageHeader;
import java.nio.ByteOrder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * The receiving agent: polls every flow's subscription in turn and hands each message's header words to the
 * flow's {@link FlowReceiver}. Other threads reach it only through its command queue, which it drains at the
 * start of every cycle, so a command runs between messages. While paused it runs commands but polls nothing, so
 * the images fill and Aeron's flow control back-pressures the publications.
 */
final class ReceivePoller implements Agent {
    static final String ROLE_NAME = "lossprobe-aeron-rx";
    /** Fragments one subscription may deliver per cycle, so no flow starves the others. */
    static final int FRAGMENT_LIMIT = 256;

    private final Subscription[] subscriptions;
    private final FragmentHandler[] handlers;
    private final ManyToOneConcurrentArrayQueue<Runnable> commands = new ManyToOneConcurrentArrayQueue<>(64);
    private volatile boolean paused;
    private volatile Thread thread;

    ReceivePoller(Subscription[] subscriptions, FlowReceiver[] flows) {
        this.subscriptions = subscriptions;
        this.handlers = new FragmentHandler[subscriptions.length];
        for (int i = 0; i < subscriptions.length; i++) {
            // The assembler passes unfragmented messages straight through and reassembles fragmented ones.
            handlers[i] = new FragmentAssembler(new FlowHandler(flows[i]));
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
        return ROLE_NAME;
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

    /** Reads the four header words big-endian, as {@link MessageHeader} defines them. */
    private static final class FlowHandler implements FragmentHandler {
        private final FlowReceiver flow;

        FlowHandler(FlowReceiver flow) {
            this.flow = flow;
        }

        @Override
        public void onFragment(DirectBuffer buffer, int offset, int length, Header header) {
            long now = System.nanoTime();
            if (length < MessageHeader.LENGTH) {
                flow.onMessage(0, 0, 0, 0, length, now);
                return;
            }
            flow.onMessage(buffer.getLong(offset + MessageHeader.WORD0_OFFSET, ByteOrder.BIG_ENDIAN),
                buffer.getLong(offset + MessageHeader.WORD1_OFFSET, ByteOrder.BIG_ENDIAN),
                buffer.getLong(offset + MessageHeader.SEQUENCE_OFFSET, ByteOrder.BIG_ENDIAN),
                buffer.getLong(offset + MessageHeader.SEND_TIME_OFFSET, ByteOrder.BIG_ENDIAN),
                length, now);
        }
    }
}
