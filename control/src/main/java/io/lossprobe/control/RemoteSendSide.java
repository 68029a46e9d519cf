package io.lossprobe.control;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.engine.SendSide;
import io.lossprobe.core.engine.SenderLoad;
import io.lossprobe.core.engine.StepStart;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.pacing.FlowSendCounts;
import io.lossprobe.core.result.ClockOffset;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.transport.TransportReport;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/** One transport's senders on the server. */
final class RemoteSendSide implements SendSide {
    private static final long POLL_NS = 5_000_000;
    private final ControlClient client;
    private final int flows;
    /** The plan's warm-up and window: the only ones the server's senders run. */
    private final io.lossprobe.core.plan.Plan plan;
    private final Map<String, Long> environment;
    private final String transport;
    /** Where each flow's receiver punches ({@link Reply.SenderReady#sourcePorts}); empty: no punches. */
    private final int[] sourcePorts;
    /** This host's address as the server sees it ({@link Reply.SenderReady#observed}): another one is a NAT. */
    private final String observed;
    private FailedRanges[] failures;
    private long warmupNs;
    private long sent;
    private long[] sentPerFlow;
    private boolean closed;

    /**
     * @param openTimeoutMs the longest the server's transport may wait while opening its senders
     *                      ({@link io.lossprobe.core.transport.Transport#senderOpenTimeoutMs}): the request waits that
     *                      long beyond the control timeout, so a server that fails to open them says why
     */
    RemoteSendSide(ControlClient client, String transport, io.lossprobe.core.plan.Plan plan, long openTimeoutMs)
        throws IOException {
        this.client = client;
        this.flows = plan.ports();
        this.plan = plan;
        this.failures = FailedRanges.perFlow(flows);
        this.transport = transport;
        Reply.SenderReady ready = client.request(new Request.OpenSender(transport, client.localAddress()),
            Reply.SenderReady.class, (int) Math.min(Integer.MAX_VALUE, client.timeoutMs() + openTimeoutMs));
        this.environment = ControlClient.remote(ready.environment());
        if (ready.sourcePorts().length != 0 && ready.sourcePorts().length != flows) {
            throw new ControlProtocolException("sender-ready with source ports for " + ready.sourcePorts().length
                + " flows, not " + flows);
        }
        this.sourcePorts = ready.sourcePorts();
        this.observed = ready.observed();
    }

    /** The longest this host's receivers keep punching before the run fails. */
    static final long PUNCH_DEADLINE_NS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);

    /**
     * This host's own receivers punch to the server's senders (each flow to its sender's source port: UDP a datagram
     * from the flow's own socket, TCP a connection that opens with the punch and then carries the flow's data) until
     * the server has every flow's, which opens a NAT on the way and tells the server where each flow's data goes; a
     * punch lost on the way is sent again (a receiver's punch does nothing for a flow whose TCP connection is being
     * made or is up). Aeron's receivers punch with their status messages instead (each flow subscribed with its
     * publication's control port, once; Aeron repeats them itself). Senders that ask for none send as without (the
     * server refuses those behind a NAT when it opens them).
     */
    @Override
    public void reachFrom(io.lossprobe.core.engine.ReceiveSide receivers, io.lossprobe.core.wire.MessageAuth passKey,
                          int runId) throws Exception {
        io.lossprobe.core.transport.ReceiverEndpoint endpoint = receivers.localEndpoint();
        if (endpoint == null) {
            return; // run --from: the receivers are another serve's
        }
        if (sourcePorts.length == 0) {
            return;
        }
        io.lossprobe.core.wire.Punch punch = new io.lossprobe.core.wire.Punch(passKey, runId, flows);
        java.net.InetAddress server = java.net.InetAddress.getByName(client.peerAddress());
        long deadline = System.nanoTime() + PUNCH_DEADLINE_NS;
        int[] missing = java.util.stream.IntStream.range(0, flows).toArray();
        while (true) {
            for (int f : missing) {
                try {
                    endpoint.punch(f, new java.net.InetSocketAddress(server, sourcePorts[f]), punch.encode(f));
                } catch (IOException e) {
                    throw new IOException("this host's " + transport + " receivers cannot send to the server's "
                        + "senders at " + client.peerAddress() + " port " + sourcePorts[f] + ": " + reason(e)
                        + " (is this host's firewall refusing " + (transport.equals("tcp") ? "TCP" : "UDP")
                        + " to it?)", e);
                }
            }
            missing = client.request(new Request.Punched(), Reply.Punches.class).missing();
            for (int f : missing) {
                if (f >= flows) {
                    throw new ControlProtocolException("punches: flow " + f + " of " + flows);
                }
            }
            if (missing.length == 0) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new ControlProtocolException("this host's " + transport + " receivers did not reach the"
                    + " server's senders within " + java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(
                        PUNCH_DEADLINE_NS) + " s (" + missing.length + " of " + flows + " flows; " + reachedBy()
                    + "): is a NAT or firewall dropping " + (transport.equals("tcp") ? "TCP connections" : "UDP")
                    + " from this host to " + client.peerAddress() + " ports " + portsText(missing) + "?"
                    + natText());
            }
        }
    }

    private static final java.util.regex.Pattern NATIVE_CALL =
        java.util.regex.Pattern.compile("^\\S+\\(\\.\\.\\) failed with error\\(-?\\d+\\): ");

    /** An I/O error's reason: Netty's native ones ("sendToAddress(..) failed with error(-1): ...") without the call. */
    static String reason(IOException e) {
        String m = String.valueOf(e.getMessage());
        java.util.regex.Matcher call = NATIVE_CALL.matcher(m);
        return call.find() ? m.substring(call.end()) : m;
    }

    /** Where the server saw this host come from, when that is not this host's own address: a NAT's. */
    private String natText() {
        String own = client.localAddress();
        return observed == null || own == null || observed.equals(own) ? ""
            : " (the server sees this host as " + observed + ", not " + own + ": a NAT on the way)";
    }

    /** What a receiver sends to reach its sender, in the failure's words. */
    private String reachedBy() {
        return transport.equals("aeron") ? "no Aeron status message reached the publications' control ports"
            : transport.equals("tcp") ? "no punched connection arrived" : "no punch arrived";
    }

    private String portsText(int[] missing) {
        java.util.TreeSet<Integer> ports = new java.util.TreeSet<>();
        for (int f : missing) {
            ports.add(sourcePorts[f]);
        }
        return ports.size() == 1 ? String.valueOf(ports.first())
            : ports.size() <= 4 ? ports.toString() : ports.first() + "-" + ports.last();
    }


    @Override
    public Map<String, Long> environment() {
        return environment;
    }

    /** The server takes the step's rates from the plan it checked: only the step's number travels. */
    @Override
    public void beginStep(StepStart start) throws IOException {
        if (!start.hasTimingOf(plan)) {
            throw new UnsupportedOperationException("these senders run the plan's own warm-up and window only");
        }
        if (start.sendFilter() != SendFilter.NONE) {
            throw new IllegalArgumentException("send filters cannot run on a remote sender");
        }
        failures = start.failures();
        sent = 0;
        sentPerFlow = null;
        warmupNs = client.request(new Request.SendBegin(start.step()), Reply.SendReady.class).warmupNs();
    }

    @Override
    public FailedRanges[] failures() {
        return failures;
    }

    @Override
    public ClockOffset clockOffset() throws IOException {
        return client.clockOffset();
    }

    /**
     * The window begins warm-up after the server starts; seen from here that is at most one control round trip
     * off, which the counters' skew includes.
     */
    @Override
    public long start() throws IOException {
        long before = System.nanoTime();
        client.request(new Request.SendStart(), Reply.Ok.class);
        return before + warmupNs;
    }

    @Override
    public void beginWindow() throws IOException {
        client.request(new Request.SendWindow(), Reply.Ok.class);
    }

    @Override
    public boolean awaitDone(long timeoutNs) throws IOException {
        long deadline = System.nanoTime() + timeoutNs;
        while (true) {
            // A server silent this long while it sends ends the step here too (it stops itself after as long).
            Reply.Sent p = client.request(new Request.SendProgress(), Reply.Sent.class,
                RemoteReceiveSide.STEP_SILENCE_MS);
            sent = p.sent();
            FailedRangesCodec.decodeInto(p.failed(), failures);
            if (p.done()) {
                if (p.sentPerFlow() == null) {
                    throw new ControlProtocolException("send progress done without per-flow counts");
                }
                sentPerFlow = ControlClient.ofLength(p.sentPerFlow(), flows, "sent");
                return true;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            LockSupport.parkNanos(Math.min(left, POLL_NS));
        }
    }

    @Override
    public long sentProgress() {
        return sent;
    }

    @Override
    public long[] sent() {
        return sentPerFlow == null ? new long[flows] : sentPerFlow.clone();
    }

    @Override
    public void abort() throws IOException {
        client.request(new Request.SendAbort(), Reply.Ok.class);
    }

    @Override
    public Outcome finish() throws IOException {
        Reply.SendOutcome r = client.request(new Request.SendResult(), Reply.SendOutcome.class);
        FailedRangesCodec.decodeInto(r.failed(), failures);
        if (r.counts().length != flows) {
            throw new ControlProtocolException("send result without " + flows + " flows");
        }
        FlowSendCounts[] out = new FlowSendCounts[flows];
        for (int i = 0; i < flows; i++) {
            long[] c = r.counts()[i];
            out[i] = new FlowSendCounts(c[0], c[1], c[2], c[3]);
        }
        Reply.Lag l = r.lag();
        Latency lag = new Latency(l.count(), l.meanNs(), l.minNs(), l.p50Ns(), l.p90Ns(), l.p99Ns(), l.p999Ns(),
            l.maxNs(), null, null);
        Map<String, Long> counters = new HashMap<>(r.counters());
        SenderLoad load = SenderLoadCodec.decode(counters);
        return new Outcome(out, r.windowNs(), lag, new TransportReport(counters, r.flowCounters(), r.notes()),
            r.failedAfterClose(), load);
    }

    @Override
    public void close() throws IOException {
        if (!closed) {
            closed = true;
            client.request(new Request.Close(), Reply.Ok.class);
        }
    }
}
