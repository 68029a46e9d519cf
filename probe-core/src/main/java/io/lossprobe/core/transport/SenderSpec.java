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
 * @param reach      how the senders reach the receivers ({@link Reach})
 * @param sourceHost the address the data must leave from (a server's address on its controller's connection, which
 *                   the controller's receivers take data from), or null: wherever the route's preferred source is
 */
public record SenderSpec(Plan plan, String targetHost, int runId, Map<String, String> options,
                         io.lossprobe.core.accounting.FlowReceiver[] replies, SendFailureListener failures,
                         io.lossprobe.core.wire.MessageAuth auth, Reach reach,
                         String sourceHost) {
    public SenderSpec {
        options = Map.copyOf(options);
        failures = failures == null ? SendFailureListener.NONE : failures;
        java.util.Objects.requireNonNull(auth, "a run's messages are always authenticated");
        java.util.Objects.requireNonNull(reach, "reach");
    }

    /** How senders reach their receivers. */
    public enum Reach {
        /** To {@code targetHost} on the plan's ports. */
        DIRECT,
        /**
         * The receivers open the way first when asked: a sender whose {@link SenderEndpoint#sourcePorts} are not empty
         * sends each flow only to the address and port its receiver's punch came from
         * ({@link SenderEndpoint#awaitPunches}), which must be {@code targetHost}; one whose are sends as
         * {@link #DIRECT}.
         */
        PUNCHES,
        /**
         * As {@link #PUNCHES}, and the receivers are behind a NAT ({@code targetHost} is the NAT's address): only the
         * way a punch opened reaches them, so every sender must ask for punches ({@code LocalSendSide} refuses one
         * whose {@code sourcePorts} are empty).
         */
        BEHIND_NAT
    }

    /** Whether the receivers punch when asked ({@link Reach#PUNCHES} or {@link Reach#BEHIND_NAT}). */
    public boolean punched() {
        return reach != Reach.DIRECT;
    }

    /** Whether the receivers are behind a NAT ({@link Reach#BEHIND_NAT}). */
    public boolean behindNat() {
        return reach == Reach.BEHIND_NAT;
    }

    public SenderSpec(Plan plan, String targetHost, int runId, Map<String, String> options,
                      io.lossprobe.core.accounting.FlowReceiver[] replies, SendFailureListener failures,
                      io.lossprobe.core.wire.MessageAuth auth) {
        this(plan, targetHost, runId, options, replies, failures, auth, Reach.DIRECT, null);
    }

    public SenderSpec(Plan plan, String targetHost, int runId, Map<String, String> options,
                      io.lossprobe.core.wire.MessageAuth auth) {
        this(plan, targetHost, runId, options, null, null, auth);
    }

    /** This spec with another {@link Reach}. */
    public SenderSpec reaching(Reach how) {
        return new SenderSpec(plan, targetHost, runId, options, replies, failures, auth, how, sourceHost);
    }

    /** This spec with its data leaving from {@code host} ({@link #sourceHost}). */
    public SenderSpec from(String host) {
        return new SenderSpec(plan, targetHost, runId, options, replies, failures, auth, reach, host);
    }

    public String option(String key, String fallback) {
        return options.getOrDefault(key, fallback);
    }
}
