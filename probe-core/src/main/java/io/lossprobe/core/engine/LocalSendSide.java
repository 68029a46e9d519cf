package io.lossprobe.core.engine;

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
    private SendLoop loop;
    private CompletableFuture<Void> sending;
    private volatile Exception windowHookFailure;

    private LocalSendSide(SenderEndpoint endpoint, Plan plan, int runId) {
        this.endpoint = endpoint;
        this.plan = plan;
        this.runId = runId;
    }

    public static LocalSendSide open(Transport transport, SenderSpec spec) throws Exception {
        return new LocalSendSide(transport.openSender(spec), spec.plan(), spec.runId());
    }

    @Override
    public Map<String, Long> environment() {
        return endpoint.environment();
    }

    @Override
    public void start(int step, long[] flowRates, SendFilter filter, Runnable onWindowStart) throws Exception {
        endpoint.beginStep(step);
        MessageWriter[] writers = new MessageWriter[flowRates.length];
        for (int i = 0; i < writers.length; i++) {
            writers[i] = endpoint.writer(i);
        }
        loop = new SendLoop(writers, runId, step, plan.messageSize(), flowRates, plan.warmupNs(), plan.durationNs(),
            BATCH_LIMIT, filter);
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
    public void close() throws Exception {
        endpoint.close();
    }
}
