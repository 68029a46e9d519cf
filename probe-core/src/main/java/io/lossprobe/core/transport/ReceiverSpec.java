package io.lossprobe.core.transport;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Plan;
import java.util.Map;

/**
 * What a transport needs to open its receivers.
 *
 * @param flows   the per-flow accounting objects, indexed by flow
 * @param options transport-specific settings (e.g. {@code udp.receiveBuffer}), all optional
 */
public record ReceiverSpec(Plan plan, String bindAddress, FlowReceiver[] flows, Map<String, String> options) {
    public ReceiverSpec {
        options = Map.copyOf(options);
    }

    public String option(String key, String fallback) {
        return options.getOrDefault(key, fallback);
    }
}
