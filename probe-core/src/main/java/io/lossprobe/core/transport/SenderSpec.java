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
 * @param auth       the run's message key (the send loop tags every message with it; echo replies are checked)
 * @param punched    the receivers open the way first (they may be behind a NAT): each flow's sender sends only to
 *                   the address and port its receiver's punch came from ({@link SenderEndpoint#awaitPunches}), which
 *                   must be {@code targetHost}; false: to {@code targetHost} on the plan's ports
 */
public record SenderSpec(Plan plan, String targetHost, int runId, Map<String, String> options,
                         io.lossprobe.core.accounting.FlowReceiver[] replies, SendFailureListener failures,
                         io.lossprobe.core.wire.MessageAuth auth, boolean punched) {
    public SenderSpec {
        options = Map.copyOf(options);
        failures = failures == null ? SendFailureListener.NONE : failures;
        java.util.Objects.requireNonNull(auth, "a run's messages are always authenticated");
    }

    public SenderSpec(Plan plan, String targetHost, int runId, Map<String, String> options,
                      io.lossprobe.core.accounting.FlowReceiver[] replies, SendFailureListener failures,
                      io.lossprobe.core.wire.MessageAuth auth) {
        this(plan, targetHost, runId, options, replies, failures, auth, false);
    }

    public SenderSpec(Plan plan, String targetHost, int runId, Map<String, String> options,
                      io.lossprobe.core.wire.MessageAuth auth) {
        this(plan, targetHost, runId, options, null, null, auth);
    }

    /** This spec with its senders waiting for their receivers' punches ({@link #punched}). */
    public SenderSpec punchedFirst() {
        return new SenderSpec(plan, targetHost, runId, options, replies, failures, auth, true);
    }

    public String option(String key, String fallback) {
        return options.getOrDefault(key, fallback);
    }
}
