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
    ReceiveSideFactory LOCAL = local(null);

    /**
     * Receivers in this process taking data only from {@code peer} (the sending host of a {@code --reverse} run;
     * null: any address, the messages' tags alone decide).
     */
    static ReceiveSideFactory local(String peer) {
        return (transport, plan, runId, auth, options) -> LocalReceiveSide.open(transport,
            new ReceiverSpec(plan, plan.bindAddress(),
                LocalReceiveSide.newFlows(plan, runId, auth),
                options, null, peer));
    }

    /** @param auth the run's message key (a remote side uses its own, derived from the control session) */
    ReceiveSide open(Transport transport, Plan plan, int runId, io.lossprobe.core.wire.MessageAuth auth,
                     Map<String, String> options) throws Exception;

    /**
     * The run's message key when this side is on another host (both ends derive it from the control session);
     * null for a side in this process, which takes the engine's.
     */
    default io.lossprobe.core.wire.MessageAuth dataKey(int runId) {
        return null;
    }
}
