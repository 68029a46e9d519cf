package io.lossprobe.core.transport;

import io.lossprobe.core.plan.Plan;
import java.util.Map;

/**
 * What a transport needs to open its senders.
 *
 * @param targetHost the receivers' address
 * @param options    transport-specific settings, all optional
 */
public record SenderSpec(Plan plan, String targetHost, int runId, Map<String, String> options) {
    public SenderSpec {
        options = Map.copyOf(options);
    }

    public String option(String key, String fallback) {
        return options.getOrDefault(key, fallback);
    }
}
