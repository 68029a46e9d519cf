package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.counters.EgressQdisc;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.ClockOffset;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.wire.MessageAuth;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The sides of one pass (one transport, one message size): its {@link SendSide}s and its {@link ReceiveSide}s, which
 * every step begins, samples, drains and closes. A run opens one sender and one receiver, or, multicast, one sender
 * and several receivers that are each sent every flow ({@link #replicated}). What a step reads from them is read
 * side by side, in their order, and combined here: per-flow counts are summed over the sides, flow {@code i} being
 * the plan's flow {@code i} on each; what replicated receivers received is what every one of them did (the least).
 */
final class StepSides implements AutoCloseable {
    private final List<SendSide> senders;
    private final List<ReceiveSide> receivers;
    private final boolean replicated;

    private StepSides(List<SendSide> senders, List<ReceiveSide> receivers, boolean replicated) {
        if (senders.isEmpty() || receivers.isEmpty()) {
            throw new IllegalArgumentException("a step needs senders and receivers");
        }
        this.senders = List.copyOf(senders);
        this.receivers = List.copyOf(receivers);
        this.replicated = replicated;
    }

    /** Opens the receivers, then the senders; what opened is closed again when a later one fails to open. */
    static StepSides open(ReceiveSideFactory receiveSides, SendSideFactory sendSides, Transport transport, Plan pass,
                          int runId, MessageAuth auth, Map<String, String> options) throws Exception {
        return open(List.of(receiveSides), null, sendSides, transport, pass, runId, auth, options);
    }

    /**
     * {@link #open(ReceiveSideFactory, SendSideFactory, Transport, Plan, int, MessageAuth, Map)} with a receive side
     * from each of {@code receiveSides}, in their order; with {@code lost} (multicast) each is sent every flow, and
     * a receiver that fails is lost to the run ({@link MulticastReceiveSide}) rather than failing it.
     */
    static StepSides open(List<ReceiveSideFactory> receiveSides, LostReceivers lost, SendSideFactory sendSides,
                          Transport transport, Plan pass, int runId, MessageAuth auth, Map<String, String> options)
        throws Exception {
        boolean replicated = lost != null;
        List<ReceiveSide> receivers = new ArrayList<>();
        List<SendSide> senders = new ArrayList<>();
        try {
            for (int i = 0; i < receiveSides.size(); i++) {
                if (!replicated) {
                    receivers.add(receiveSides.get(i).open(transport, pass, runId, auth, options));
                } else {
                    receivers.add(lost.open(i, receiveSides.get(i), transport, pass, runId, auth, options));
                }
            }
            senders.add(sendSides.open(transport, pass, runId, auth, options));
            for (SendSide s : senders) {
                s.reachFrom(receivers.get(0), auth, runId);
            }
            return new StepSides(senders, receivers, replicated);
        } catch (Exception | Error e) {
            closeAll(senders, receivers, e);
            throw e;
        }
    }

    /** Whether every receive side is sent every flow (multicast), so each has a result of its own. */
    boolean replicated() {
        return replicated;
    }

    /** Each receiver's name, in their order: its own, else {@code receiver N} (from 1). */
    List<String> receiverNames() {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < receivers.size(); i++) {
            String name = receivers.get(i).name();
            out.add(name != null ? name : "receiver " + (i + 1));
        }
        return out;
    }

    List<SendSide> senders() {
        return senders;
    }

    List<ReceiveSide> receivers() {
        return receivers;
    }

    /** Whether every receive side is in this process (test hooks act on their endpoints). */
    boolean receiversLocal() {
        return receivers.stream().allMatch(r -> r.localEndpoint() != null);
    }

    /** Whether every side is in this process, so this host's counters cover both ends of every flow. */
    boolean allLocal() {
        return receiversLocal() && senders.stream().allMatch(s -> s instanceof LocalSendSide);
    }

    /** The egress queue of the senders on this host (the first's target's), else none. */
    EgressQdisc egress() {
        for (SendSide s : senders) {
            if (s instanceof LocalSendSide local) {
                return EgressQdisc.forTarget(local.targetHost());
            }
        }
        return EgressQdisc.NONE;
    }

    /** The senders' socket settings, for the step's egress figures. */
    Map<String, Long> senderEnvironment() {
        if (senders.size() == 1) {
            return senders.get(0).environment();
        }
        Map<String, Long> out = new HashMap<>();
        senders.forEach(s -> out.putAll(s.environment()));
        return out;
    }

    /** The other host's clock minus this one's, from the first receiver that has one; null when none has. */
    ClockOffset receiversClockOffset() throws Exception {
        return firstOffset(receivers, ReceiveSide::clockOffset);
    }

    /** The other host's clock minus this one's, from the first sender that has one; null when none has. */
    ClockOffset sendersClockOffset() throws Exception {
        return firstOffset(senders, SendSide::clockOffset);
    }

    private interface OffsetOf<S> {
        ClockOffset of(S side) throws Exception;
    }

    private static <S> ClockOffset firstOffset(List<S> sides, OffsetOf<S> offset) throws Exception {
        for (S side : sides) {
            ClockOffset o = offset.of(side);
            if (o != null) {
                return o;
            }
        }
        return null;
    }

    /** Echo mode test seam: the local receivers' replies the filter picks are never sent. */
    void replyFilter(SendFilter filter) {
        for (ReceiveSide r : receivers) {
            if (r.localEndpoint() != null) {
                r.replyFilter(filter);
            }
        }
    }

    /** The local receivers' endpoints, for test hooks. */
    List<ReceiverEndpoint> localEndpoints() {
        List<ReceiverEndpoint> out = new ArrayList<>();
        for (ReceiveSide r : receivers) {
            if (r.localEndpoint() != null) {
                out.add(r.localEndpoint());
            }
        }
        return out;
    }

    void beginSenders(StepStart start) throws Exception {
        for (SendSide s : senders) {
            s.beginStep(start);
        }
    }

    void beginReceivers(StepStart start) throws Exception {
        for (ReceiveSide r : receivers) {
            r.beginStep(start);
        }
        requireReceivers();
    }

    void countIntervals(long windowStartNs, long intervalNs, int intervals) throws Exception {
        for (ReceiveSide r : receivers) {
            r.countIntervals(windowStartNs, intervalNs, intervals);
        }
    }

    /** Starts every sender now; returns when the window begins (the latest sender's). */
    long start() throws Exception {
        long windowStart = Long.MIN_VALUE;
        for (SendSide s : senders) {
            windowStart = Math.max(windowStart, s.start());
        }
        return windowStart;
    }

    /** Starts every sender with the warm-up at {@code atNs}; returns when the window begins (the latest sender's). */
    long start(long atNs) throws Exception {
        long windowStart = Long.MIN_VALUE;
        for (SendSide s : senders) {
            windowStart = Math.max(windowStart, s.start(atNs));
        }
        return windowStart;
    }

    void beginReceiversWindow() throws Exception {
        for (ReceiveSide r : receivers) {
            r.beginWindow();
        }
    }

    void beginSendersWindow() throws Exception {
        for (SendSide s : senders) {
            s.beginWindow();
        }
    }

    /** Whether every sender's sending ended, waiting up to {@code timeoutNs} on each in turn until one has not. */
    boolean awaitDone(long timeoutNs) throws Exception {
        for (SendSide s : senders) {
            if (!s.awaitDone(timeoutNs)) {
                return false;
            }
        }
        return true;
    }

    void abort() throws Exception {
        for (SendSide s : senders) {
            s.abort();
        }
    }

    /**
     * Distinct messages received so far per flow, over every receiver; replicated, what every receiver received
     * (the least of them), so a drain waits for the last receiver.
     */
    long[] progress() throws Exception {
        List<long[]> parts = new ArrayList<>();
        for (ReceiveSide r : receivers) {
            long[] p = r.progress();
            if (p != null) {
                parts.add(p); // null: a multicast receiver gone, which no longer holds up the drain
            }
        }
        requireReceivers();
        return replicated ? leastPerFlow(parts) : perFlow(parts);
    }

    /**
     * Each receiver's reason for being lost to the run, in their order (null for one that takes part); all null
     * but in a multicast run.
     */
    List<String> gone() {
        List<String> out = new ArrayList<>();
        for (ReceiveSide r : receivers) {
            out.add(r instanceof MulticastReceiveSide m ? m.gone() : null);
        }
        return out;
    }

    /** A multicast run whose every receiver is gone ends here: nobody is left to send to. */
    private void requireReceivers() throws java.io.IOException {
        if (!replicated || gone().contains(null)) {
            return;
        }
        List<String> names = receiverNames();
        List<String> why = gone();
        StringBuilder each = new StringBuilder();
        for (int i = 0; i < names.size(); i++) {
            each.append(i == 0 ? "" : "; ").append(names.get(i)).append(' ').append(why.get(i));
        }
        throw new java.io.IOException("every receiver is gone, so nothing more is sent (" + each + ")");
    }

    /** Per-flow least of the parts, which must cover the same flows. */
    static long[] leastPerFlow(List<long[]> parts) {
        long[] out = parts.get(0).clone();
        for (long[] p : parts) {
            if (p.length != out.length) {
                throw new IllegalStateException("sides with " + out.length + " and " + p.length + " flows");
            }
            for (int i = 0; i < out.length; i++) {
                out[i] = Math.min(out[i], p[i]);
            }
        }
        return out;
    }

    /** Messages sent so far in the window, over every sender. */
    long sentProgress() throws Exception {
        long total = 0;
        for (SendSide s : senders) {
            total += s.sentProgress();
        }
        return total;
    }

    /** Messages each flow sent, over every sender, as far as known now. */
    long[] sent() throws Exception {
        List<long[]> parts = new ArrayList<>();
        for (SendSide s : senders) {
            parts.add(s.sent());
        }
        return perFlow(parts);
    }

    /** Echo mode: replies received per flow, over every sender that counts them; null in stream mode. */
    long[] replyProgress() throws Exception {
        List<long[]> parts = new ArrayList<>();
        for (SendSide s : senders) {
            long[] p = s.replyProgress();
            if (p != null) {
                parts.add(p);
            }
        }
        return parts.isEmpty() ? null : perFlow(parts);
    }

    /** Every sender's outcome, in their order. */
    List<SendSide.Outcome> finish() throws Exception {
        List<SendSide.Outcome> out = new ArrayList<>();
        for (SendSide s : senders) {
            out.add(s.finish());
        }
        return out;
    }

    /** Each flow's wire end over every sender: what the receivers finalise. */
    static long[] wireEnds(List<SendSide.Outcome> outcomes, FailedRanges[] failures) {
        List<long[]> parts = new ArrayList<>();
        for (SendSide.Outcome o : outcomes) {
            parts.add(o.wireEnds(failures));
        }
        return perFlow(parts);
    }

    /** Every receiver's receipt; replicated receivers' carry their flows' lost sets, for the union over them. */
    List<ReceiveSide.Receipt> closeStep(int step, long[] wireEnd) throws Exception {
        List<ReceiveSide.Receipt> out = new ArrayList<>();
        for (ReceiveSide r : receivers) {
            out.add(r.closeStep(step, wireEnd, replicated));
        }
        requireReceivers();
        return out;
    }

    /** Echo mode: every sender's replies' accounting closed; null in stream mode. */
    List<FlowReceiver.Summary[]> closeReplies(int step, long[] wireEnd) throws Exception {
        List<FlowReceiver.Summary[]> out = new ArrayList<>();
        for (SendSide s : senders) {
            FlowReceiver.Summary[] r = s.closeReplies(step, wireEnd);
            if (r != null) {
                out.add(r);
            }
        }
        return out.isEmpty() ? null : out;
    }

    /** Late arrivals per flow for a closed step, over every receiver. */
    static ReceiveSide.Late lateAfterClose(List<ReceiveSide> receivers, int step) throws Exception {
        List<long[]> first = new ArrayList<>();
        List<long[]> duplicates = new ArrayList<>();
        for (ReceiveSide r : receivers) {
            ReceiveSide.Late late = r.lateAfterClose(step);
            first.add(late.first());
            duplicates.add(late.duplicates());
        }
        return new ReceiveSide.Late(perFlow(first), perFlow(duplicates));
    }

    /** Late arrivals per flow for a closed step, each receiver's own, in their order (replicated receivers). */
    static List<ReceiveSide.Late> lateEach(List<ReceiveSide> receivers, int step) throws Exception {
        List<ReceiveSide.Late> out = new ArrayList<>();
        for (ReceiveSide r : receivers) {
            out.add(r.lateAfterClose(step));
        }
        return out;
    }

    /**
     * The one part a step's result is built from. A step's result combines one sender's outcome and one receiver's
     * receipt: a step with several has nothing yet that merges their delays and transport reports.
     */
    static <T> T single(List<T> parts, String what) {
        if (parts.size() != 1) {
            throw new IllegalStateException("a step's result is built from one " + what + ", not " + parts.size());
        }
        return parts.get(0);
    }

    /** Per-flow sums of the parts, which must cover the same flows; the one part itself when there is one. */
    static long[] perFlow(List<long[]> parts) {
        if (parts.size() == 1) {
            return parts.get(0);
        }
        long[] out = new long[parts.get(0).length];
        for (long[] p : parts) {
            if (p.length != out.length) {
                throw new IllegalStateException("sides with " + out.length + " and " + p.length + " flows");
            }
            for (int i = 0; i < out.length; i++) {
                out[i] += p[i];
            }
        }
        return out;
    }

    /** The senders, then the receivers, each in reverse order of opening. */
    @Override
    public void close() throws Exception {
        closeAll(senders, receivers, null);
    }

    private static void closeAll(List<SendSide> senders, List<ReceiveSide> receivers, Throwable pending)
        throws Exception {
        List<AutoCloseable> sides = new ArrayList<>(receivers);
        sides.addAll(senders);
        Exception first = null;
        for (int i = sides.size() - 1; i >= 0; i--) {
            try {
                sides.get(i).close();
            } catch (Exception e) {
                if (pending != null) {
                    pending.addSuppressed(e);
                } else if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
