package io.lossprobe.core.transport;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Plan;
import java.util.Map;

/**
 * What a transport needs to open its receivers.
 *
 * @param flows    the per-flow accounting objects, indexed by flow
 * @param options  transport-specific settings (e.g. {@code udp.receiveBuffer}), all optional
 * @param echoHost in echo mode ({@code plan.echo()}), the requester's address where a transport without a
 *                 return path (Aeron) sends replies; null otherwise. Every transport answers exactly the messages
 *                 for which {@link FlowReceiver#onMessage} returned true, as the same header with kind ECHO
 *                 (and its tag made again: {@link FlowReceiver#replyTag}).
 * @param peer     between hosts, the only address data may come from (the controller's); null in one process.
 *                 Anything from elsewhere is foreign: never counted, never answered.
 */
public record ReceiverSpec(Plan plan, String bindAddress, FlowReceiver[] flows, Map<String, String> options,
                           String echoHost, String peer) {
    public ReceiverSpec {
        options = Map.copyOf(options);
    }

    public ReceiverSpec(Plan plan, String bindAddress, FlowReceiver[] flows, Map<String, String> options) {
        this(plan, bindAddress, flows, options, null, null);
    }

    public String option(String key, String fallback) {
        return options.getOrDefault(key, fallback);
    }
}
