package io.lossprobe.core.engine;

import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.Transport;
import java.util.Map;

/** Opens the receiving half of a transport's run for the engine. */
@FunctionalInterface
public interface ReceiveSideFactory {
    /** Receivers in this process, bound on the plan's bind address. */
    ReceiveSideFactory LOCAL = local(false);

    /**
     * Receivers in this process; with {@code offsetFree} their delays are relative to each flow's minimum, for
     * senders on another host (a {@code --reverse} run).
     */
    static ReceiveSideFactory local(boolean offsetFree) {
        return (transport, plan, runId, options) -> {
            io.lossprobe.core.accounting.FlowReceiver[] flows =
                LocalReceiveSide.newFlows(plan.ports(), runId, plan.messageSize(), plan.levels().size());
            for (io.lossprobe.core.accounting.FlowReceiver f : flows) {
                f.offsetFree(offsetFree);
            }
            return LocalReceiveSide.open(transport, new ReceiverSpec(plan, plan.bindAddress(), flows, options));
        };
    }

    ReceiveSide open(Transport transport, Plan plan, int runId, Map<String, String> options) throws Exception;
}
