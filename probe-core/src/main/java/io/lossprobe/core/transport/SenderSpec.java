package io.lossprobe.core.transport;

import io.lossprobe.core.plan.Plan;
import java.util.Map;

/**
 * What a transport needs to open its senders.
 *
 * @param targetHost the receivers' address
 * @param options    transport-specific settings, all optional
 * @param replies    in echo mode, the accounting of each flow's replies (messages of kind ECHO arriving back at
 *                   the sender), to be fed on the thread {@link SenderEndpoint#onReplyThread} runs on; null in
 *                   stream mode
 * @param failures   where the writers report accepted messages that failed to leave
 */
public record SenderSpec(Plan plan, String targetHost, int runId, Map<String, String> options,
                         io.lossprobe.core.accounting.FlowReceiver[] replies, SendFailureListener failures) {
    public SenderSpec {
        options = Map.copyOf(options);
        failures = failures == null ? SendFailureListener.NONE : failures;
    }

    public SenderSpec(Plan plan, String targetHost, int runId, Map<String, String> options) {
        this(plan, targetHost, runId, options, null, null);
    }

    public String option(String key, String fallback) {
        return options.getOrDefault(key, fallback);
    }
}
