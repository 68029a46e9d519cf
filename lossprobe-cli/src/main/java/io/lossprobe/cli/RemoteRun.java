package io.lossprobe.cli;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlClient;
import io.lossprobe.control.ControlProtocolException;
import io.lossprobe.core.engine.ReceiveSideFactory;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.Transport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A run against a {@code lossprobe serve}: the authenticated control connection, the negotiated plan, and the
 * engine whose far side is on the server. Shared by {@code run --target} and {@code mesh}; closing it says goodbye
 * to the server.
 */
final class RemoteRun implements AutoCloseable {
    static final int CONNECT_TIMEOUT_MS = 10_000;

    private final ControlClient client;
    private final RunEngine engine;

    private RemoteRun(ControlClient client, RunEngine engine) {
        this.client = client;
        this.engine = engine;
    }

    /**
     * Connects, authenticates and negotiates {@code plan}.
     *
     * @param reverse the server sends and this host receives
     * @throws UnknownHostException "unknown host 'NAME'" when the name does not resolve
     * @throws IOException          with one line naming the server for anything else
     */
    static RemoteRun open(HostPort server, Auth auth, Plan plan, Map<String, String> options,
                          Map<String, Transport> transports, boolean reverse, RunListener listener, int timeoutMs)
        throws IOException {
        return open(server, auth, plan, options, transports, reverse, listener, StepHooks.NONE, timeoutMs);
    }

    /** {@link #open} with the engine's step hooks ({@code --bidir}: each step waits for the other direction's). */
    static RemoteRun open(HostPort server, Auth auth, Plan plan, Map<String, String> options,
                          Map<String, Transport> transports, boolean reverse, RunListener listener, StepHooks hooks,
                          int timeoutMs) throws IOException {
        ControlClient client = connect(server, auth, timeoutMs);
        try {
            plan = withServersMaxRate(plan, client.serverLimits());
            int runId = ThreadLocalRandom.current().nextInt();
            // Exactly the options the run's transports declare as applying on a server travel there.
            client.negotiate(plan, runId, options, transportsOf(plan, transports));
            // --reverse: this host's receivers take data only from the server's address. Forward: the data goes to
            // the address the authenticated connection reached, never to the name resolved again (which could
            // answer with another host).
            RunEngine engine = reverse
                ? new RunEngine(plan, transports, options, listener, hooks,
                    ReceiveSideFactory.local(client.peerAddress()), client.sendSides(), runId)
                : new RunEngine(plan, transports, options, listener, hooks, client.receiveSides(),
                    client.peerAddress(), runId);
            return new RemoteRun(client, engine);
        } catch (IOException | RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * A search to "max" between hosts searches up to what the server accepts: its rate limit, and its bytes/s limit
     * at the plan's largest message.
     */
    static Plan withServersMaxRate(Plan plan, io.lossprobe.control.ServerLimits limits) {
        io.lossprobe.core.plan.SearchPlan s = plan.search();
        if (s == null || s.maxRate() != 0) {
            return plan;
        }
        int largest = plan.sizes().stream().mapToInt(Integer::intValue).max().orElse(plan.messageSize());
        long max = Math.min(limits.maxRatePerSecond(), limits.maxBytesPerSecond() / largest);
        return plan.withSearch(new io.lossprobe.core.plan.SearchPlan(s.criteria(), s.pdrLossRatio(), s.precision(),
            s.minRate(), Math.max(max, s.minRate()), s.shortTrialNs(), s.maxTrials(), s.latencyFractions()));
    }

    /** The plan's transports among {@code available}, in the plan's order. */
    static List<Transport> transportsOf(Plan plan, Map<String, Transport> available) {
        List<Transport> out = new ArrayList<>();
        for (String name : plan.transports()) {
            if (available.containsKey(name)) {
                out.add(available.get(name));
            }
        }
        return out;
    }

    RunEngine engine() {
        return engine;
    }

    /**
     * {@link ControlClient#connect} with messages for people: an unresolvable name says "unknown host", an IPv6
     * address is printed in brackets, and a failed authentication suggests the likeliest cause.
     */
    static ControlClient connect(HostPort server, Auth auth, int timeoutMs) throws IOException {
        try {
            InetAddress.getAllByName(server.host());
        } catch (UnknownHostException e) {
            throw new UnknownHostException("unknown host '" + server.host() + "'");
        }
        try {
            return ControlClient.connect(server.host(), server.port(), auth, timeoutMs);
        } catch (ControlProtocolException e) {
            String msg = e.getMessage() == null ? "" : e.getMessage();
            if (msg.contains("authentication failed")) {
                throw new ControlProtocolException("lossprobe serve at " + server + " refused this host's secret: "
                    + "do the secret files on the two hosts differ?");
            }
            if (msg.contains("prove it knows the secret")) {
                throw new ControlProtocolException("lossprobe serve at " + server + " could not prove it knows the "
                    + "secret: do the secret files on the two hosts differ?");
            }
            throw e;
        } catch (IOException e) {
            // ControlClient wraps a failed TCP connect with its cause; the message is rebuilt around the address.
            if (e.getCause() != null && e.getMessage() != null && e.getMessage().startsWith("cannot reach")) {
                throw new IOException("cannot reach lossprobe serve at " + server + ": "
                    + LossprobeCommand.describe(e.getCause()), e.getCause());
            }
            throw e;
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
