package io.lossprobe.cli;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlClient;
import io.lossprobe.core.engine.ReceiveSideFactory;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.SendSideFactory;
import io.lossprobe.core.plan.Addresses;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.wire.MessageAuth;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code run --multicast GROUP --receiver A --receiver B ...}: this host sends every flow to the group, and each
 * {@code lossprobe serve} receives it. The controller authenticates to every serve and gives each the same plan,
 * run id and data key (chosen here, sent to each wrapped under its own session, as {@code run --from} does), so
 * every receiver checks the one stream's tags; each serve binds the group on the plan's ports, joins it on the
 * interface of its own bind address, and takes data only from this host's address. The engine's receive sides are
 * the serves', one each, every one sent every flow: each step has a result per receiver. Closing says goodbye to
 * every serve. With {@code --mdc} ({@code aeron.mdc}) there is no group: every serve subscribes on its own address
 * and asks this host's publications (at the address of {@code aeron.mdc}, which must be the one this host reached
 * every serve from) for a copy, and the publications take control frames from the serves' bound addresses only.
 */
final class MulticastRun implements AutoCloseable {
    private final List<ControlClient> clients;
    private final RunEngine engine;

    private MulticastRun(List<ControlClient> clients, RunEngine engine) {
        this.clients = clients;
        this.engine = engine;
    }

    /**
     * Connects to every receiver in turn and negotiates {@code plan} with each; a receiver that cannot be reached
     * or refuses ends the run before any traffic.
     *
     * @param options the run's options, the group among them ({@code udp.group})
     */
    static MulticastRun open(List<HostPort> receivers, String group, Auth auth, Plan plan,
                             Map<String, String> options, Map<String, Transport> transports, RunListener listener,
                             int timeoutMs) throws IOException {
        List<ControlClient> clients = new ArrayList<>();
        try {
            int runId = ThreadLocalRandom.current().nextInt();
            MessageAuth runKey = MessageAuth.random();
            List<Transport> used = RemoteRun.transportsOf(plan, transports);
            List<ReceiveSideFactory> sides = new ArrayList<>();
            String mdc = options.get("aeron.mdc");
            List<String> bound = new ArrayList<>();
            for (HostPort r : receivers) {
                ControlClient c = RemoteRun.connect(r, auth, timeoutMs);
                clients.add(c);
                if (mdc != null && !Addresses.literal(mdc).equals(Addresses.literal(c.localAddress()))) {
                    throw named(r, new IOException("this host reached it from " + c.localAddress() + ", the "
                        + "first receiver from " + mdc + ": a multi-destination-cast publication takes every "
                        + "receiver's status messages at one address"));
                }
                try {
                    bound.add(c.negotiate(plan, runId, options, used, runKey));
                } catch (IOException e) {
                    throw named(r, e);
                }
                if (mdc != null && Addresses.literal(bound.get(bound.size() - 1)).isAnyLocalAddress()) {
                    throw named(r, new IOException("its receivers are bound to " + bound.get(bound.size() - 1)
                        + ": a multi-destination-cast receiver needs serve --bind ADDR (its status messages leave "
                        + "from that address, the only ones the sender takes)"));
                }
                // SSM: the serves take data from the source the senders bind to, else from this end's address.
                sides.add(named(r, c.receiveSides(options.get("udp.source"))));
            }
            Map<String, String> local = options;
            if (mdc != null) {
                // The sender's publications take control frames from the serves' receiving addresses only.
                local = new java.util.HashMap<>(options);
                local.put("aeron.mdcReceivers", String.join(",", bound));
            }
            RunEngine engine = RunEngine.multicast(plan, transports, local, listener, sides,
                SendSideFactory.local(group != null ? group : bound.get(0)), runId);
            return new MulticastRun(clients, engine);
        } catch (IOException | RuntimeException e) {
            clients.forEach(ControlClient::close);
            throw e;
        }
    }

    /**
     * {@code sides}, whose failure to open (a serve that cannot bind or join the group: no such interface, no
     * multicast on it) names the receiver: the engine opens every receiver before anything is sent, so one that
     * cannot join refuses the run before traffic.
     */
    private static ReceiveSideFactory named(HostPort receiver, ReceiveSideFactory sides) {
        return new ReceiveSideFactory() {
            @Override
            public io.lossprobe.core.engine.ReceiveSide open(Transport transport, Plan pass, int runId,
                                                             MessageAuth auth, Map<String, String> options)
                throws Exception {
                try {
                    return sides.open(transport, pass, runId, auth, options);
                } catch (IOException e) {
                    throw named(receiver, e);
                }
            }

            @Override
            public MessageAuth dataKey(int runId) {
                return sides.dataKey(runId);
            }
        };
    }

    private static IOException named(HostPort receiver, IOException e) {
        // lossprobe's own exception, so the run's error is this line as it is.
        io.lossprobe.control.ControlProtocolException named = new io.lossprobe.control.ControlProtocolException(
            "receiver " + receiver + ": " + e.getMessage());
        named.initCause(e);
        return named;
    }

    /** Each receiver the run lost, with when and why, in the order they were lost (the first step naming it). */
    static List<String> lostReceivers(io.lossprobe.core.result.RunResult result) {
        Map<String, String> lost = new java.util.LinkedHashMap<>();
        for (io.lossprobe.core.result.StepResult s : result.steps()) {
            if (s.receivers() != null) {
                s.receivers().stream().filter(r -> r.gone() != null)
                    .forEach(r -> lost.putIfAbsent(r.receiver(), r.gone()));
            }
        }
        List<String> out = new ArrayList<>();
        lost.forEach((receiver, why) -> out.add(receiver + " (" + why + ")"));
        return out;
    }

    RunEngine engine() {
        return engine;
    }

    @Override
    public void close() {
        clients.forEach(ControlClient::close);
    }
}
