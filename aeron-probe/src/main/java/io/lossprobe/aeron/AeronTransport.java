package io.lossprobe.aeron;

import io.aeron.driver.MediaDriver;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.DeclaredTransport;
import java.util.function.Consumer;

/**
 * Aeron: one exclusive publication and one subscription per port pair, each on its own UDP endpoint
 * ({@code aeron:udp?endpoint=host:port}), through a media driver. Reliable by default: the receiving driver NAKs
 * gaps and the sending driver retransmits, so the application sees no loss. With {@code aeron.reliable=false}
 * the receiver fills gaps instead (Aeron-framed raw UDP), and loss shows.
 *
 * <p>Options (all optional): {@code aeron.dir} (attach to an external driver), {@code aeron.reliable},
 * {@code aeron.termLength} (1m), {@code aeron.mtu} (1408), {@code aeron.threading}, {@code aeron.connectTimeoutMs};
 * see {@link AeronOptions}. A receiver and a sender opened from the same instance share one driver and client,
 * released when both are closed: an instance serves one run at a time (a server gives every session its own), and
 * it keeps nothing else of a run (whether the run is reliable comes from the run's options).
 *
 * <p>Echo mode: replies travel on streams of their own, from the responder to the requester's port
 * {@code basePort + ports + i} (see {@link AeronReceiver}, {@link AeronSender} and {@link EchoReplier}).
 */
public final class AeronTransport extends DeclaredTransport {
    private final Consumer<MediaDriver.Context> driverCustomizer;
    private AeronDriver shared;
    private int users;

    public AeronTransport() {
        this(ctx -> {
        });
    }

    /**
     * For tests: {@code driverCustomizer} adjusts the embedded driver's context after lossprobe's own settings,
     * e.g. to install a loss-generating receive endpoint.
     */
    public AeronTransport(Consumer<MediaDriver.Context> driverCustomizer) {
        // Reliable by default; this instance keeps no record of what a run asked for.
        super("aeron", true, AeronOptions.ALL, AeronProbeCounter.ALL);
        this.driverCustomizer = driverCustomizer;
    }

    /** The multicast settings that go together ({@link Multicast#parse}): tagged flow control needs a group tag. */
    @Override
    public void checkOptions(java.util.Map<String, String> options) {
        Multicast.parse(options);
    }

    /**
     * False when the run's options say {@code aeron.reliable=false}, and for multicast with flow control {@code max}
     * (Aeron's default there), which repairs what it can but does not wait for a slower receiver: one left behind
     * loses what passed out of the sender's term (docs/multicast.md), so its loss is no defect.
     */
    @Override
    public boolean reliable(java.util.Map<String, String> options) {
        return AeronOptions.RELIABLE_OPTION.read(options) && !(Multicast.given(options)
            && Multicast.FLOW_CONTROL.read(options).equals("max"));
    }

    /**
     * The term buffers an embedded driver maps for one side of the run: three terms per publication or image, one
     * per flow, and twice that in echo mode (the reply streams).
     */
    @Override
    public long memoryBytes(io.lossprobe.core.plan.Plan plan, java.util.Map<String, String> options) {
        long perStream = 3L * AeronOptions.TERM_LENGTH_OPTION.read(options);
        return perStream * plan.ports() * (plan.echo() ? 2 : 1);
    }

    /**
     * Its senders wait up to {@code aeron.connectTimeoutMs} for their subscribers to connect, and in echo mode as
     * long again for the reply streams ({@link AeronSender#open}).
     */
    @Override
    public long senderOpenTimeoutMs(io.lossprobe.core.plan.Plan plan, java.util.Map<String, String> options) {
        return AeronOptions.CONNECT_TIMEOUT_OPTION.read(options) * (plan.echo() ? 2 : 1);
    }

    @Override
    public ReceiverEndpoint openReceiver(ReceiverSpec spec) throws Exception {
        refuseTrafficClasses(spec.plan());
        return withDriver(spec.options(), driver -> AeronReceiver.open(spec, driver, this::release));
    }

    @Override
    public SenderEndpoint openSender(SenderSpec spec) throws Exception {
        refuseTrafficClasses(spec.plan());
        return withDriver(spec.options(), driver -> AeronSender.open(spec, driver, this::release));
    }

    /**
     * NAKs the sending driver took for a flow's publication beyond those the receiving driver sent for the flow's
     * session: a receiver never NAKs twice what its driver counted once, and on the way NAKs can only be lost, so
     * the excess came from someone else (a spoofer that forged the receiver's address and port; the sender's
     * socket is connected to the receiver's endpoint, so nothing else reaches it). Their retransmissions are not
     * repairs of this run's loss.
     */
    @Override
    public java.util.List<String> stepWarnings(io.lossprobe.core.transport.TransportReport sender,
                                               io.lossprobe.core.transport.TransportReport receiver) {
        java.util.List<String> out = new java.util.ArrayList<>();
        if (sender.counters().containsKey(AeronProbeCounter.STATUS_SOURCES.key)) {
            return out; // multicast: the publication takes every receiver's NAKs, this receiver sent its own only
        }
        for (var e : new java.util.TreeMap<>(sender.flows()).entrySet()) {
            Long received = e.getValue().get(AeronProbeCounter.SND_NAKS_RECEIVED.key);
            Long sent = receiver.flow(e.getKey()).get(AeronProbeCounter.RCV_NAKS_SENT.key);
            if (received != null && sent != null && received > sent) {
                out.add("flow " + e.getKey() + ": the sending driver received " + received + " NAK(s), the "
                    + "receiving driver sent " + sent + ": " + (received - sent) + " NAK(s) were not the receiver's "
                    + "(spoofed from its address and port); the retransmissions they asked for (aeron."
                    + "retransmitsSent) went to the receiver and repaired no loss");
            }
        }
        return out;
    }

    /**
     * Aeron's media driver sets no TOS or traffic class on its sockets (1.51: its channel URIs and driver context
     * have no such setting; UdpChannelTransport sets only SO_REUSEADDR, the buffers and the multicast options), so
     * a plan with traffic classes is refused before any of its traffic (the command line refuses it earlier).
     */
    static void refuseTrafficClasses(io.lossprobe.core.plan.Plan plan) {
        if (!plan.dscp().isEmpty()) {
            throw new IllegalArgumentException(DSCP_REFUSAL);
        }
    }

    /** Why {@code --dscp} and Aeron do not go together, in one line. */
    public static final String DSCP_REFUSAL = "--dscp: Aeron cannot mark traffic classes (its channels and media "
        + "driver have no TOS / traffic-class setting); choose --transport udp,tcp";

    /** Opens an endpoint on the shared driver; the driver's reference is given back if opening fails. */
    private <T> T withDriver(java.util.Map<String, String> rawOptions, EndpointOpener<T> opener) throws Exception {
        AeronOptions options = AeronOptions.parse(rawOptions);
        AeronDriver driver = acquire(options);
        try {
            return opener.open(driver);
        } catch (io.aeron.exceptions.RegistrationException e) {
            RuntimeException said = driver.noRoomForTerms(e); // while the driver's directory is there to measure
            release(driver);
            throw said;
        } catch (Exception | Error e) {
            release(driver);
            throw e;
        }
    }

    @FunctionalInterface
    private interface EndpointOpener<T> {
        T open(AeronDriver driver) throws Exception;
    }

    private synchronized AeronDriver acquire(AeronOptions options) {
        if (shared == null) {
            shared = AeronDriver.start(options, driverCustomizer);
        } else if (!shared.options().equals(options)) {
            throw new IllegalStateException("receiver and sender of one Aeron transport need the same options: "
                + shared.options() + " vs " + options);
        }
        users++;
        return shared;
    }

    private synchronized void release(AeronDriver driver) {
        if (driver != shared) {
            return;
        }
        if (--users == 0) {
            shared = null;
            driver.close();
        }
    }
}
