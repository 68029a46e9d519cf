package io.lossprobe.cli;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlClient;
import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.wire.MessageAuth;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code run --from A --target B}: a test between two {@code lossprobe serve}s, driven from this host. The controller
 * authenticates to both, gives both one data key (chosen here, sent to each wrapped under its own session), asks A
 * to send to B (A connects to B and sends nothing unless B proves the secret), tells B to take data only from the
 * address A's data leaves from, and runs the plan with A's senders and B's receivers: this host sends and receives
 * no data. Delays are B's clock against A's, each estimated against this host's; the sending host's CPU and /proc
 * figures are A's, sampled over its control session. Closing says goodbye to both.
 */
final class FromRun implements AutoCloseable {
    private final ControlClient sender;
    private final ControlClient receiver;
    private final RunEngine engine;
    private final ControlClient.SendTarget route;

    private FromRun(ControlClient sender, ControlClient receiver, RunEngine engine, ControlClient.SendTarget route) {
        this.sender = sender;
        this.receiver = receiver;
        this.engine = engine;
        this.route = route;
    }

    /**
     * Connects to both servers, negotiates {@code plan} with each and sets up A's route to B.
     *
     * @param from   the sending serve (A)
     * @param target the receiving serve (B), as A is to reach it too
     */
    static FromRun open(HostPort from, HostPort target, Auth auth, Plan plan, Map<String, String> options,
                        Map<String, Transport> transports, RunListener listener, int timeoutMs) throws IOException {
        ControlClient a = RemoteRun.connect(from, auth, timeoutMs);
        ControlClient b = null;
        try {
            b = RemoteRun.connect(target, auth, timeoutMs);
            int runId = ThreadLocalRandom.current().nextInt();
            MessageAuth runKey = MessageAuth.random();
            var used = RemoteRun.transportsOf(plan, transports);
            b.negotiate(plan, runId, options, used, runKey);
            a.negotiate(plan, runId, options, used, runKey);
            ControlClient.SendTarget route = a.sendTo(target.host(), target.port());
            ControlClient sending = a;
            RunEngine engine = new RunEngine(plan, transports, options, listener, StepHooks.NONE,
                b.receiveSides(route.source()), a.sendSides(), runId)
                .withHostCounters(() -> sample(sending));
            return new FromRun(a, b, engine, route);
        } catch (IOException | RuntimeException e) {
            a.close();
            if (b != null) {
                b.close();
            }
            throw e;
        }
    }

    /** The sending server's host counters now (called by the engine between its own steps' phases). */
    private static HostCounters.Sample sample(ControlClient sending) {
        try {
            return sending.hostSample();
        } catch (IOException e) {
            throw new UncheckedIOException("the sending server's host counters: " + e.getMessage(), e);
        }
    }

    RunEngine engine() {
        return engine;
    }

    /** Where A's data goes and where it leaves from, as A reported them. */
    ControlClient.SendTarget route() {
        return route;
    }

    @Override
    public void close() {
        sender.close();
        receiver.close();
    }
}
