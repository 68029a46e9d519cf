package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.pacing.SendFilter;
import io.lossprobe.core.pacing.SendLoop;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Senders in this process: the transport's endpoint, paced by a {@link SendLoop} per step. */
public final class LocalSendSide implements SendSide {
    /** Most messages one flow sends per send-loop cycle. */
    static final int BATCH_LIMIT = 64;

    private final SenderEndpoint endpoint;
    private final Plan plan;
    private final int runId;
    private final FlowReceiver[] replies;
    private final String targetHost;
    private SendLoop loop;
    private CompletableFuture<Void> sending;
    private volatile Exception windowHookFailure;

    private LocalSendSide(SenderEndpoint endpoint, Plan plan, int runId, FlowReceiver[] replies,
                          String targetHost) {
        this.endpoint = endpoint;
        this.targetHost = targetHost;
        this.plan = plan;
        this.runId = runId;
        this.replies = replies;
    }

    /** Opens the transport's senders; in echo mode with accounting for the replies they get back. */
    public static LocalSendSide open(Transport transport, SenderSpec spec) throws Exception {
        Plan plan = spec.plan();
        FlowReceiver[] replies = null;
        SenderSpec withReplies = spec;
        if (plan.echo()) {
            replies = new FlowReceiver[plan.ports()];
            for (int i = 0; i < replies.length; i++) {
                replies[i] = new FlowReceiver(i, spec.runId(), plan.messageSize(), plan.levels().size(), true);
            }
            withReplies = new SenderSpec(plan, spec.targetHost(), spec.runId(), spec.options(), replies);
        }
        return new LocalSendSide(transport.openSender(withReplies), plan, spec.runId(), replies,
            spec.targetHost());
    }

    /** Where the senders send to. */
    public String targetHost() {
        return targetHost;
    }

    @Override
    public Map<String, Long> environment() {
        return endpoint.environment();
    }

    @Override
    public void start(int step, long[] flowRates, int[] windowBits, SendFilter filter, Runnable onWindowStart)
        throws Exception {
        if (replies != null) {
            endpoint.onReplyThread(() -> {
                for (int i = 0; i < replies.length; i++) {
                    replies[i].beginStep(step, windowBits[i]);
                }
            });
        }
        endpoint.beginStep(step);
        MessageWriter[] writers = new MessageWriter[flowRates.length];
        for (int i = 0; i < writers.length; i++) {
            writers[i] = endpoint.writer(i);
        }
        // Closed loop has no warm-up: only counted requests are answered, so a warm-up could never be paced.
        long warmupNs = plan.concurrency() > 0 ? 0 : plan.warmupNs();
        loop = new SendLoop(writers, runId, step, plan.messageSize(), flowRates, warmupNs, plan.durationNs(),
            BATCH_LIMIT, filter);
        if (plan.concurrency() > 0) {
            FlowReceiver[] r = replies;
            loop.closedLoop(plan.concurrency(), flow -> r[flow].progress(), Math.max(plan.drainNs(), 1_000_000));
        }
        windowHookFailure = null;
        loop.onWindowStart(() -> {
            try {
                onWindowStart.run();
                endpoint.beginWindow();
            } catch (Exception e) {
                windowHookFailure = e;
            }
        });
        loop.start(System.nanoTime());
        sending = endpoint.drive(loop);
    }

    @Override
    public boolean awaitDone(long timeoutNs) throws Exception {
        try {
            sending.get(timeoutNs, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException("sender failed: " + e.getCause(), e.getCause());
        }
        if (windowHookFailure != null) {
            throw windowHookFailure;
        }
        return true;
    }

    @Override
    public long sentProgress() {
        return loop == null ? 0 : loop.sentProgress();
    }

    @Override
    public void abort() {
        if (loop != null) {
            loop.abort();
        }
    }

    @Override
    public Outcome finish() throws Exception {
        SendLoop.FlowSendCounts[] counts = new SendLoop.FlowSendCounts[loop.flows()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = loop.counts(i);
        }
        return new Outcome(counts, loop.windowNs(), loop.lag(), endpoint.endStep());
    }

    @Override
    public long[] replyProgress() {
        if (replies == null) {
            return null;
        }
        long[] out = new long[replies.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = replies[i].progress();
        }
        return out;
    }

    @Override
    public FlowReceiver.Summary[] closeReplies(int step, long[] sent) throws Exception {
        if (replies == null) {
            return null;
        }
        FlowReceiver.Summary[] out = new FlowReceiver.Summary[replies.length];
        endpoint.onReplyThread(() -> {
            for (int i = 0; i < replies.length; i++) {
                out[i] = replies[i].closeStep(sent[i]);
            }
        });
        return out;
    }

    @Override
    public void close() throws Exception {
        endpoint.close();
    }
}
