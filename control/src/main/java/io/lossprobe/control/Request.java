package io.lossprobe.control;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.lossprobe.core.plan.Plan;
import java.util.Map;

/**
 * A message from the controller to the server, one record per type; the JSON object's {@code type} names it.
 * Each record checks what it is built from, so a message that decodes is well-formed; whether it is allowed now is
 * the session's state machine's business ({@link ServerSession}).
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = Request.Hello.class, name = "hello"),
    @JsonSubTypes.Type(value = Request.Authenticate.class, name = "auth"),
    @JsonSubTypes.Type(value = Request.PlanRequest.class, name = "plan"),
    @JsonSubTypes.Type(value = Request.Open.class, name = "open"),
    @JsonSubTypes.Type(value = Request.BeginStep.class, name = "begin-step"),
    @JsonSubTypes.Type(value = Request.CountIntervals.class, name = "count-intervals"),
    @JsonSubTypes.Type(value = Request.BeginWindow.class, name = "begin-window"),
    @JsonSubTypes.Type(value = Request.Progress.class, name = "progress"),
    @JsonSubTypes.Type(value = Request.CloseStep.class, name = "close-step"),
    @JsonSubTypes.Type(value = Request.Late.class, name = "late"),
    @JsonSubTypes.Type(value = Request.Close.class, name = "close"),
    @JsonSubTypes.Type(value = Request.OpenSender.class, name = "open-sender"),
    @JsonSubTypes.Type(value = Request.Punched.class, name = "punched"),
    @JsonSubTypes.Type(value = Request.SendBegin.class, name = "send-begin"),
    @JsonSubTypes.Type(value = Request.SendStart.class, name = "send-start"),
    @JsonSubTypes.Type(value = Request.SendWindow.class, name = "send-window"),
    @JsonSubTypes.Type(value = Request.SendProgress.class, name = "send-progress"),
    @JsonSubTypes.Type(value = Request.SendAbort.class, name = "send-abort"),
    @JsonSubTypes.Type(value = Request.SendResult.class, name = "send-result"),
    @JsonSubTypes.Type(value = Request.Clock.class, name = "clock"),
    @JsonSubTypes.Type(value = Request.SendTo.class, name = "send-to"),
    @JsonSubTypes.Type(value = Request.HostSample.class, name = "host-sample"),
    @JsonSubTypes.Type(value = Request.Bye.class, name = "bye"),
})
sealed interface Request {
    /** The first frame: the protocol version and the controller's fresh nonce. Unauthenticated. */
    record Hello(int version, String nonce) implements Request {
        public Hello {
            Wire.nonce(nonce, "nonce");
        }
    }

    /** The controller's proof over both nonces, once the server proved itself. Unauthenticated frame. */
    record Authenticate(String proof) implements Request {
        public Authenticate {
            Wire.nonce(proof, "proof");
        }
    }

    /**
     * The run: the plan (its {@code transportOptions} are exactly the options forwarded to the server) and the run
     * id the data key is derived with. {@code dataKey}, when present, is the run's data key wrapped for this
     * session ({@code MessageAuth.wrapFor}: {@code run --from}, where two servers must share one key); absent,
     * both ends derive the key from the session.
     */
    record PlanRequest(int runId, Plan plan, String dataKey) implements Request {
        public PlanRequest {
            Wire.present(plan, "plan");
            if (dataKey != null && !dataKey.matches("[0-9a-f]{32}")) {
                throw new IllegalArgumentException("field 'dataKey' must be 32 hexadecimal digits");
            }
        }

        PlanRequest(int runId, Plan plan) {
            this(runId, plan, null);
        }
    }

    /**
     * Open the receivers of one of the plan's transports, for one of its message sizes. {@code source}, when
     * present, is the only address their data may come from ({@code run --from}: the sending server's, as it
     * reported it); absent, the controller's.
     */
    record Open(String transport, int messageSize, String source) implements Request {
        public Open {
            Wire.name(transport, "transport");
            Wire.atLeast(messageSize, 0, "messageSize");
            if (source != null) {
                Wire.address(source, "source");
            }
        }

        Open(String transport, int messageSize) {
            this(transport, messageSize, null);
        }
    }

    /**
     * Begin a step: fresh accounting per flow, and the controller's estimate of this host's clock minus its own, so
     * delays become one-way. The step's rate (messages/s over all flows) and window are checked against the plan
     * (a level of it, or a search's trial within its rates and trial lengths); the server derives the tracking
     * windows and intervals from them, never anything else.
     */
    record BeginStep(int step, long clockOffsetNs, long rate, long windowNs) implements Request {
        public BeginStep {
            Wire.atLeast(step, 0, "step");
            Wire.atLeast(rate, 0, "rate");
            Wire.atLeast(windowNs, 1, "windowNs");
        }
    }

    /**
     * Count the step just begun per interval too ({@code --interval}): its window starts at {@code windowStartNs}
     * on the controller's clock (the intervals' length and count come from the plan and the step's window).
     */
    record CountIntervals(long windowStartNs) implements Request {
    }

    /** The window begins: the server samples its counters. */
    record BeginWindow() implements Request {
    }

    /** Poll the receivers; carries the sender's failed ranges recorded since the last poll (null: none). */
    record Progress(Map<Integer, long[]> failed) implements Request {
    }

    /**
     * Close the step: each flow's wire end (sent plus failed) and the last failed ranges; {@code lostSets}: the
     * reply is to carry each flow's lost numbers ({@link Reply.LostRanges}), as a multicast run composes them.
     */
    record CloseStep(int step, long[] wireEnd, Map<Integer, long[]> failed, boolean lostSets) implements Request {
        public CloseStep {
            Wire.atLeast(step, 0, "step");
            Wire.nonNegative(wireEnd, "wireEnd");
        }

        CloseStep(int step, long[] wireEnd, Map<Integer, long[]> failed) {
            this(step, wireEnd, failed, false);
        }
    }

    /** Late arrivals counted for a closed step since it closed. */
    record Late(int step) implements Request {
        public Late {
            Wire.atLeast(step, 0, "step");
        }
    }

    /** Close whatever receivers or senders are open. */
    record Close() implements Request {
    }

    /** Reverse runs: open the senders of one of the plan's transports, towards the controller's address. */
    /**
     * Open this session's senders towards the controller. {@code address}: the controller's own address on the
     * control connection; another than the one the server sees it at means a NAT on the way, whose hosts only the
     * ways their punches opened reach ({@code SenderSpec.Reach.BEHIND_NAT}).
     */
    record OpenSender(String transport, String address) implements Request {
        public OpenSender {
            Wire.name(transport, "transport");
            Wire.address(address, "address");
        }
    }

    /**
     * This controller's receivers sent their punches to the senders' {@code sourcePorts}: the server waits briefly
     * for those not yet arrived and answers with the flows still without one ({@link Reply.Punches}).
     */
    record Punched() implements Request {
    }

    /** Prepare a step's senders; the rates come from the checked plan, never from a message. */
    record SendBegin(int step) implements Request {
        public SendBegin {
            Wire.atLeast(step, 0, "step");
        }
    }

    record SendStart() implements Request {
    }

    record SendWindow() implements Request {
    }

    record SendProgress() implements Request {
    }

    record SendAbort() implements Request {
    }

    record SendResult() implements Request {
    }

    /** One clock exchange ({@link ClockSync}). */
    record Clock(int seq) implements Request {
        public Clock {
            Wire.atLeast(seq, 0, "seq");
        }
    }

    /**
     * {@code run --from}: this session's senders send to the {@code lossprobe serve} at {@code host:port} instead of
     * to the controller. The server connects there as a controller would and sends nothing unless that serve proves
     * it knows the secret.
     */
    record SendTo(String host, int port) implements Request {
        public SendTo {
            Wire.address(host, "host");
            Wire.atLeast(port, 1, "port");
            if (port > 65535) {
                throw new IllegalArgumentException("field 'port' must be a port");
            }
        }
    }

    /** This server's host counters now ({@code run --from}: the sending host's figures). */
    record HostSample() implements Request {
    }

    /** The controller is done; the server closes the session. */
    record Bye() implements Request {
    }
}
