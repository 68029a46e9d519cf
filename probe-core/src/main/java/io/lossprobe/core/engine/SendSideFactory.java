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
        return (transport, plan, runId, options) -> LocalSendSide.open(transport,
            new SenderSpec(plan, targetHost, runId, options), clock);
    }

    SendSide open(Transport transport, Plan plan, int runId, Map<String, String> options) throws Exception;
}
