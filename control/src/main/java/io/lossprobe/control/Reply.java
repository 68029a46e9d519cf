package io.lossprobe.control;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.lossprobe.core.result.Cpu;
import io.lossprobe.core.result.LossBurst;
import java.util.List;
import java.util.Map;

/**
 * A message from the server to the controller, one record per type; the JSON object's {@code type} names it.
 * Each record checks what it is built from; text in it is made safe to print ({@link PeerText}).
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.PROPERTY, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = Reply.Challenge.class, name = "challenge"),
    @JsonSubTypes.Type(value = Reply.Welcome.class, name = "welcome"),
    @JsonSubTypes.Type(value = Reply.PlanOk.class, name = "plan-ok"),
    @JsonSubTypes.Type(value = Reply.Ready.class, name = "ready"),
    @JsonSubTypes.Type(value = Reply.Ok.class, name = "ok"),
    @JsonSubTypes.Type(value = Reply.Received.class, name = "received"),
    @JsonSubTypes.Type(value = Reply.StepResult.class, name = "step-result"),
    @JsonSubTypes.Type(value = Reply.LateCounts.class, name = "late-counts"),
    @JsonSubTypes.Type(value = Reply.SenderReady.class, name = "sender-ready"),
    @JsonSubTypes.Type(value = Reply.Punches.class, name = "punches"),
    @JsonSubTypes.Type(value = Reply.SendReady.class, name = "send-ready"),
    @JsonSubTypes.Type(value = Reply.Sent.class, name = "sent"),
    @JsonSubTypes.Type(value = Reply.SendOutcome.class, name = "send-outcome"),
    @JsonSubTypes.Type(value = Reply.ClockReply.class, name = "clock-reply"),
    @JsonSubTypes.Type(value = Reply.SendToOk.class, name = "send-to-ok"),
    @JsonSubTypes.Type(value = Reply.HostSample.class, name = "host-sample"),
    @JsonSubTypes.Type(value = Reply.Failure.class, name = "error"),
})
sealed interface Reply {
    /** The server's nonce and its proof over both nonces, given before the controller proves anything. */
    record Challenge(int version, String nonce, String proof) implements Reply {
        public Challenge {
            Wire.nonce(nonce, "nonce");
            Wire.nonce(proof, "proof");
        }
    }

    /** The first authenticated frame: the session is admitted; the limits it runs under. */
    record Welcome(ServerLimits limits) implements Reply {
        public Welcome {
            Wire.present(limits, "limits");
        }
    }

    /** The plan is accepted; the address the server's receivers bind. */
    record PlanOk(String bindAddress) implements Reply {
        public PlanOk {
            Wire.address(bindAddress, "bindAddress");
        }
    }

    /** Receivers are open; what they report of their sockets. */
    record Ready(Map<String, Long> environment) implements Reply {
        public Ready {
            Wire.counters(environment, "environment");
        }
    }

    record Ok() implements Reply {
    }

    /** What each flow received so far (the reply to {@code progress}). */
    record Received(long[] received) implements Reply {
        public Received {
            Wire.nonNegative(received, "received");
        }
    }

    /**
     * The closed step: every flow's receive summary, the transport's counters and notes, and this host's counter
     * deltas and CPU over the window (null when the window was never begun).
     */
    record StepResult(List<FlowSummary> flows, Map<String, Long> counters,
                      Map<Integer, Map<String, Long>> flowCounters, List<String> notes,
                      Map<String, Long> hostCounters, Cpu cpu, Intervals intervals) implements Reply {
        public StepResult {
            Wire.present(flows, "flows").forEach(f -> Wire.present(f, "flows"));
            Wire.counters(counters, "counters");
            Wire.flowCounters(flowCounters, "flowCounters");
            notes = Wire.texts(notes, "notes");
            if (hostCounters != null) {
                Wire.counters(hostCounters, "hostCounters");
            }
        }
    }

    /**
     * One flow's receive summary; the histograms travel in HdrHistogram's compressed form, base64
     * ({@link SummaryCodec}); {@code delayBelowZero} ({@code transitBelowZero}) is null when no delay (transit
     * time) was below zero.
     */
    record FlowSummary(int step, long received, long duplicates, long reordered, long late, long lateDuplicates,
                       long corrupt, long foreign, long warmup, long lossEvents, long lostInRuns,
                       LossBurst lossBurst, String delay, String delayBelowZero, String transit,
                       String transitBelowZero, String ipdv, double jitterNs, long warmupDelays,
                       long warmupMinDelayNs, Long kernelStamped, long[] receivedBySize, LostRanges lostRanges) {
        public FlowSummary {
            if (receivedBySize != null) {
                // Per size of the plan's mix: never more sizes than a mix has, and adding up to what was received.
                if (receivedBySize.length > io.lossprobe.core.plan.SizeMix.MAX_SIZES) {
                    throw new IllegalArgumentException("field 'receivedBySize' has more sizes than a mix has");
                }
                Wire.nonNegative(receivedBySize, "receivedBySize");
                long sum = 0;
                for (long v : receivedBySize) {
                    sum += v;
                }
                if (sum != received) {
                    throw new IllegalArgumentException("receivedBySize adds up to " + sum + ", not the "
                        + received + " received");
                }
            }
            Wire.atLeast(step, 0, "step");
            Wire.nonNegative(new long[] {received, duplicates, reordered, late, lateDuplicates, corrupt, foreign,
                warmup, lossEvents, lostInRuns, warmupDelays, kernelStamped == null ? 0 : kernelStamped}, "flows");
            Wire.present(lossBurst, "lossBurst");
            Wire.counters(lossBurst.histogram(), "lossBurst");
            Wire.present(delay, "delay");
            Wire.present(transit, "transit");
            Wire.present(ipdv, "ipdv");
        }
    }

    /**
     * One flow's lost numbers ({@link io.lossprobe.core.accounting.LostSet}) in a step result whose close asked for
     * them: {@code known} with the (first, end) pairs, or not known (past the bound; {@code pairs} then empty).
     * {@link SummaryCodec} checks the pairs against the flow's wire end and its {@code lostInRuns}.
     */
    record LostRanges(boolean known, long[] pairs) {
        public LostRanges {
            Wire.present(pairs, "pairs");
            if (pairs.length > 2 * io.lossprobe.core.accounting.LostSet.MAX_RANGES) {
                throw new IllegalArgumentException("field 'pairs' has more than "
                    + io.lossprobe.core.accounting.LostSet.MAX_RANGES + " ranges");
            }
            if (!known && pairs.length > 0) {
                throw new IllegalArgumentException("lost ranges not known, yet given");
            }
        }
    }

    /**
     * A step's receive counts per interval over all flows (null in a step without intervals); the delay histograms
     * travel compressed, base64, one per interval ({@code delayBelowZero}'s entries null where none was below zero).
     */
    record Intervals(long[] received, long[] duplicates, long[] reordered, List<String> delay,
                     List<String> delayBelowZero) {
        public Intervals {
            int n = Wire.nonNegative(received, "received").length;
            if (Wire.nonNegative(duplicates, "duplicates").length != n
                || Wire.nonNegative(reordered, "reordered").length != n
                || Wire.present(delay, "delay").size() != n
                || Wire.present(delayBelowZero, "delayBelowZero").size() != n) {
                throw new IllegalArgumentException("field 'intervals' must hold one entry of each kind per interval");
            }
            delay.forEach(d -> Wire.present(d, "delay"));
        }
    }

    /** Late arrivals per flow for a closed step: first arrivals and duplicates. */
    record LateCounts(long[] first, long[] duplicates) implements Reply {
        public LateCounts {
            Wire.nonNegative(first, "first");
            Wire.nonNegative(duplicates, "duplicates");
        }
    }

    /**
     * {@code run --from}: this server authenticated the serve at {@code target} (it proved the secret) and will send
     * there only; its data leaves from {@code source}, the address the receivers there must take it from.
     */
    record SendToOk(String target, String source) implements Reply {
        public SendToOk {
            Wire.address(target, "target");
            Wire.address(source, "source");
        }
    }

    /**
     * This server's host counters at one moment ({@code run --from}: the sending host's figures are the sending
     * server's, not the controller's): /proc's counters, the host's busy and total CPU time, this process's CPU
     * time and the server's monotonic clock, as {@code HostCounters.Sample} holds them.
     */
    record HostSample(Map<String, Long> counters, long cpuBusyJiffies, long cpuTotalJiffies, long processCpuNs,
                      long wallNs) implements Reply {
        public HostSample {
            Wire.counters(counters, "counters");
            Wire.atLeast(cpuBusyJiffies, 0, "cpuBusyJiffies");
            Wire.atLeast(cpuTotalJiffies, 0, "cpuTotalJiffies");
        }
    }

    /** Reverse runs: senders are open; what they report of their sockets. */
    /**
     * The senders are open. {@code sourcePorts}: the port each flow's data leaves from, where the controller's
     * receivers punch before the first step (their data then goes where each punch came from: through a NAT);
     * empty when these senders send to the controller's address on the plan's ports. {@code observed}: the
     * controller's address as this server sees it (another than the controller's own: a NAT on the way).
     */
    record SenderReady(Map<String, Long> environment, int[] sourcePorts, String observed) implements Reply {
        public SenderReady {
            Wire.counters(environment, "environment");
            for (int p : Wire.present(sourcePorts, "sourcePorts")) {
                if (p < 1 || p > 65535) {
                    throw new IllegalArgumentException("sourcePorts must be ports 1-65535");
                }
            }
            Wire.address(observed, "observed");
        }
    }

    /** The flows whose receivers' punches have not reached the senders yet (none: every flow can send). */
    record Punches(int[] missing) implements Reply {
        public Punches {
            for (int f : Wire.present(missing, "missing")) {
                if (f < 0) {
                    throw new IllegalArgumentException("missing must list flows");
                }
            }
        }
    }

    /** The step's senders are prepared; the warm-up they will send before the window. */
    record SendReady(long warmupNs) implements Reply {
        public SendReady {
            Wire.atLeast(warmupNs, 0, "warmupNs");
        }
    }

    /**
     * Sending progress: done, messages sent so far, per flow once done (else null), and the failed ranges recorded
     * since the last report (null: none).
     */
    record Sent(boolean done, long sent, long[] sentPerFlow, Map<Integer, long[]> failed) implements Reply {
        public Sent {
            Wire.atLeast(sent, 0, "sent");
            if (sentPerFlow != null) {
                Wire.nonNegative(sentPerFlow, "sentPerFlow");
            }
        }
    }

    /**
     * The sent step: per flow {scheduled, sent, sendFailed, behind}, the window's length, failures after the close,
     * the last failed ranges, the send loop's lag, the transport's counters and notes.
     */
    record SendOutcome(long[][] counts, long windowNs, long failedAfterClose, Map<Integer, long[]> failed, Lag lag,
                       Map<String, Long> counters, Map<Integer, Map<String, Long>> flowCounters, List<String> notes)
        implements Reply {
        public SendOutcome {
            for (long[] c : Wire.present(counts, "counts")) {
                if (Wire.nonNegative(c, "counts").length != 4) {
                    throw new IllegalArgumentException("field 'counts' must hold four numbers per flow");
                }
            }
            Wire.atLeast(windowNs, 0, "windowNs");
            Wire.atLeast(failedAfterClose, 0, "failedAfterClose");
            Wire.present(lag, "lag");
            Wire.counters(counters, "counters");
            Wire.flowCounters(flowCounters, "flowCounters");
            notes = Wire.texts(notes, "notes");
        }
    }

    /** The send loop's lag behind its schedule (a {@link io.lossprobe.core.result.Latency} on one clock). */
    record Lag(long count, double meanNs, long minNs, long p50Ns, long p90Ns, long p99Ns, long p999Ns, long maxNs) {
    }

    /** One clock exchange's server stamps ({@link ClockSync}): t2 on receipt, t3 just before the reply. */
    record ClockReply(int seq, long t2, long t3) implements Reply {
    }

    /**
     * The server refuses or ends the session, in words (made safe to print). {@code version} is the protocol
     * version the reply is written for: the peer's own when the versions differ, so an older peer can print it.
     */
    record Failure(int version, String message) implements Reply {
        public Failure {
            message = PeerText.clean(Wire.present(message, "message"));
        }
    }
}
