package io.lossprobe.control;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.engine.ReceiveSide;
import io.lossprobe.core.engine.StepStart;
import io.lossprobe.core.result.ClockOffset;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.TransportReport;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/** One transport's receivers on the server, for one message size. */
final class RemoteReceiveSide implements ReceiveSide {
    /**
     * The longest a server may take to answer a poll during a step before this host stops sending to it; as long
     * as the server's own bound ({@code ServerSession.SENDING_SILENCE_NS}), for the same reason.
     */
    static final int STEP_SILENCE_MS = 5_000;

    private final ControlClient client;
    private final int flows;
    private final Map<String, Long> environment;
    private final Map<Integer, Late> lateSeen = new HashMap<>();
    /** Intervals the open step is cut into (0: none). */
    private int intervals;
    /** The sender's failure ledger of the open step, and how much of each flow's was shipped to the server. */
    private FailedRanges[] failures;
    private int[] shipped;
    private boolean closed;

    /** @param source the only address data may come from, when not the controller's ({@code run --from}) */
    RemoteReceiveSide(ControlClient client, String transport, int flows, int messageSize, String source)
        throws IOException {
        this.client = client;
        this.flows = flows;
        this.environment = ControlClient.remote(client.request(new Request.Open(transport, messageSize, source),
            Reply.Ready.class).environment());
    }

    @Override
    public Map<String, Long> environment() {
        return environment;
    }

    /**
     * The server is told the step's rate and window and derives the tracking windows from them and its plan itself:
     * {@code start.windowBits()} stay here.
     */
    @Override
    public void beginStep(StepStart start) throws IOException {
        this.failures = start.failures();
        this.shipped = new int[flows];
        this.intervals = 0;
        client.request(new Request.BeginStep(start.step(), start.clockOffsetNs(), start.level().ratePerSecond(),
            start.windowNs()), Reply.Ok.class);
    }

    @Override
    public void countIntervals(long windowStartNs, long intervalNs, int count) throws IOException {
        client.request(new Request.CountIntervals(windowStartNs), Reply.Ok.class);
        this.intervals = count;
    }

    @Override
    public void beginWindow() throws IOException {
        client.request(new Request.BeginWindow(), Reply.Ok.class);
    }

    @Override
    public ClockOffset clockOffset() throws IOException {
        return client.clockOffset();
    }

    /**
     * Also ships the failed ranges recorded since the last call, so the server's trackers skip them in time. Polled
     * while this host sends to the server: a server silent for {@link #STEP_SILENCE_MS} ends the step, and with it
     * the sending.
     */
    @Override
    public long[] progress() throws IOException {
        Reply.Received r = client.request(new Request.Progress(FailedRangesCodec.encodeNew(failures, shipped)),
            Reply.Received.class, STEP_SILENCE_MS);
        return ControlClient.ofLength(r.received(), flows, "progress");
    }

    @Override
    public Receipt closeStep(int step, long[] wireEnd) throws IOException {
        return closeStep(step, wireEnd, false);
    }

    /** With {@code lostSets}, the server sends each flow's lost ranges, each checked against its wire end. */
    @Override
    public Receipt closeStep(int step, long[] wireEnd, boolean lostSets) throws IOException {
        Reply.StepResult reply = client.request(new Request.CloseStep(step, wireEnd,
            FailedRangesCodec.encodeNew(failures, shipped), lostSets), Reply.StepResult.class);
        if (reply.flows().size() != flows) {
            throw new ControlProtocolException("step result without " + flows + " flows");
        }
        int lostShare = lostSets ? SummaryCodec.lostShare(flows) : 0;
        FlowReceiver.Summary[] summaries = new FlowReceiver.Summary[flows];
        for (int i = 0; i < flows; i++) {
            summaries[i] = SummaryCodec.decode(reply.flows().get(i), wireEnd[i], lostShare);
        }
        if ((reply.intervals() != null) != (intervals > 0)) {
            throw new ControlProtocolException(intervals > 0 ? "step result without its intervals"
                : "step result with intervals nobody asked for");
        }
        return new Receipt(summaries, new TransportReport(reply.counters(), reply.flowCounters(), reply.notes()),
            reply.hostCounters() == null ? Map.of() : reply.hostCounters(), reply.cpu(),
            reply.intervals() == null ? null : SummaryCodec.decode(reply.intervals(), intervals));
    }

    @Override
    public Late lateAfterClose(int step) throws IOException {
        if (closed) {
            return lateSeen.getOrDefault(step, new Late(new long[flows], new long[flows]));
        }
        Reply.LateCounts reply = client.request(new Request.Late(step), Reply.LateCounts.class);
        Late late = new Late(ControlClient.ofLength(reply.first(), flows, "late"),
            ControlClient.ofLength(reply.duplicates(), flows, "late"));
        lateSeen.put(step, late);
        return late;
    }

    /** The server's address as the control connection reaches it. */
    @Override
    public String name() {
        return client.peerAddress();
    }

    @Override
    public ReceiverEndpoint localEndpoint() {
        return null;
    }

    @Override
    public void close() throws IOException {
        if (!closed) {
            closed = true;
            client.request(new Request.Close(), Reply.Ok.class);
        }
    }
}
