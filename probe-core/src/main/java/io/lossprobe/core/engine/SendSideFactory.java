package io.lossprobe.core.engine;

import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import java.util.Map;

/** Opens the sending half of a transport's run for the engine. */
@FunctionalInterface
public interface SendSideFactory {
    /** Senders in this process, sending to {@code targetHost}. */
    static SendSideFactory local(String targetHost) {
        return local(targetHost, io.lossprobe.core.pacing.NanoClock.SYSTEM);
    }

    /** Senders in this process, paced on {@code clock} (a virtual clock in tests). */
    static SendSideFactory local(String targetHost, io.lossprobe.core.pacing.NanoClock clock) {
        return (transport, plan, runId, auth, options) -> LocalSendSide.open(transport,
            new SenderSpec(plan, targetHost, runId, options, auth), clock);
    }

    /** As {@link #local(String, io.lossprobe.core.pacing.NanoClock)}, the sending thread's times from
     * {@code threads}. */
    static SendSideFactory local(String targetHost, io.lossprobe.core.pacing.NanoClock clock,
                                 java.util.function.Function<java.util.concurrent.ScheduledExecutorService,
                                     io.lossprobe.core.counters.ThreadTimes> threads) {
        return (transport, plan, runId, auth, options) -> LocalSendSide.open(transport,
            new SenderSpec(plan, targetHost, runId, options, auth), clock, threads);
    }

    /** @param auth the run's message key (a remote side uses its own, derived from the control session) */
    SendSide open(Transport transport, Plan plan, int runId, io.lossprobe.core.wire.MessageAuth auth,
                  Map<String, String> options) throws Exception;

    /**
     * The run's message key when this side is on another host (both ends derive it from the control session);
     * null for a side in this process, which takes the engine's.
     */
    default io.lossprobe.core.wire.MessageAuth dataKey(int runId) {
        return null;
    }
}
