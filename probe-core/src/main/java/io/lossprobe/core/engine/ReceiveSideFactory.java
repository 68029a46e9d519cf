package io.lossprobe.core.engine;

import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.Transport;
import java.util.Map;

/** Opens the receiving half of a transport's run for the engine. */
@FunctionalInterface
public interface ReceiveSideFactory {
    /**
     * Receivers in this process, bound on the plan's bind address (the engine corrects their delays by the clock
     * offset when the senders are on another host).
     */
    ReceiveSideFactory LOCAL = (transport, plan, runId, options) -> LocalReceiveSide.open(transport,
        new ReceiverSpec(plan, plan.bindAddress(),
            LocalReceiveSide.newFlows(plan.ports(), runId, plan.messageSize(), plan.levels().size()), options));

    ReceiveSide open(Transport transport, Plan plan, int runId, Map<String, String> options) throws Exception;
}
