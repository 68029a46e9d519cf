package io.lossprobe.aeron;

import io.aeron.ChannelUriStringBuilder;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.lossprobe.core.transport.TransportOption;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.agrona.SystemUtil;

/**
 * The Aeron transport's settings, parsed from the run's transport options (all optional).
 *
 * @param aeronDir         {@code aeron.dir}: attach to the media driver running in this directory instead of
 *                         launching an embedded one; null for embedded
 * @param reliable         {@code aeron.reliable} (default true): false puts {@code reliable=false} on every
 *                         subscription, so the receiver fills gaps instead of sending NAKs
 * @param termLengthBytes  {@code aeron.termLength} (default 1m): term buffer length of each publication; each
 *                         publication and each image maps three terms, so 48 flows take 48 x 2 x 3 MiB at 1m
 * @param mtuBytes         {@code aeron.mtu} (default 1408): larger MTUs fragment IP packets
 * @param threading        {@code aeron.threading}: the embedded driver's threading mode; by default chosen for
 *                         the core count
 * @param connectTimeoutMs {@code aeron.connectTimeoutMs} (default 10000): how long a sender waits for its
 *                         subscribers to connect
 * @param multicast        {@code aeron.group} and the settings that go with it; null for unicast
 */
record AeronOptions(String aeronDir, boolean reliable, int termLengthBytes, int mtuBytes, ThreadingMode threading,
                    long connectTimeoutMs, Multicast multicast) {
    static final int DEFAULT_TERM_LENGTH_BYTES = 1024 * 1024;
    static final int DEFAULT_MTU_BYTES = 1408;
    /** Stream ids are {@code STREAM_ID_BASE + flow}, so per-stream driver counters map back to flows. */
    static final int STREAM_ID_BASE = 0x4C50_0000;

    /** The options, declared once (keys included: {@code DIR_OPTION.key()}); {@link #parse} reads through them. */
    static final TransportOption<String> DIR_OPTION = TransportOption.text("aeron.dir", "embedded driver",
        "attach to the media driver running in this directory (left running) instead of an embedded one")
        .localOnly().withSystemProperty(); // never from a controller: a serve attaches with -Dlossprobe.aeron.dir
    static final TransportOption<Boolean> RELIABLE_OPTION = TransportOption.bool("aeron.reliable", true,
        "false: subscriptions take reliable=false, so the receiver fills gaps instead of NAKing and loss shows");
    static final TransportOption<Integer> TERM_LENGTH_OPTION = TransportOption.bytes("aeron.termLength",
        DEFAULT_TERM_LENGTH_BYTES, "1m", LogBufferDescriptor.TERM_MIN_LENGTH, LogBufferDescriptor.TERM_MAX_LENGTH,
        "term buffer of each publication; publication and image map three terms each")
        .parsedBy("bytes, a power of two from 64k to 1g", AeronOptions::termLength);
    static final TransportOption<Long> MTU_OPTION = TransportOption.number("aeron.mtu", DEFAULT_MTU_BYTES, 64, 65504,
        "Aeron frame MTU; larger MTUs fragment IP packets").requiring(v -> v % 32 == 0, "a multiple of 32");
    static final TransportOption<String> THREADING_OPTION = TransportOption.choice("aeron.threading", "auto",
        "the embedded driver's threading; auto: shared on 2 cores, shared_network up to 5, dedicated above",
        "auto", "shared", "shared_network", "dedicated");
    static final TransportOption<Long> CONNECT_TIMEOUT_OPTION = TransportOption.number("aeron.connectTimeoutMs", 10_000,
        1, 120_000, "how long a sender waits for its subscribers to connect, in ms");
    static final List<TransportOption<?>> ALL = List.of(DIR_OPTION, RELIABLE_OPTION, TERM_LENGTH_OPTION, MTU_OPTION,
        THREADING_OPTION, CONNECT_TIMEOUT_OPTION, Multicast.GROUP, Multicast.MDC, Multicast.MDC_RECEIVERS,
        Multicast.TTL, Multicast.INTERFACE, Multicast.FLOW_CONTROL, Multicast.GROUP_TAG);

    static AeronOptions parse(Map<String, String> options) {
        String threadingOption = THREADING_OPTION.read(options);
        ThreadingMode threading = threadingOption.equals("auto")
            ? threadingFor(Runtime.getRuntime().availableProcessors())
            : ThreadingMode.valueOf(threadingOption.toUpperCase(Locale.ROOT));
        return new AeronOptions(DIR_OPTION.read(options), RELIABLE_OPTION.read(options),
            TERM_LENGTH_OPTION.read(options), MTU_OPTION.read(options).intValue(), threading,
            CONNECT_TIMEOUT_OPTION.read(options), Multicast.parse(options));
    }

    /** Aeron's own size syntax (64k, 1m, 1g) and its term rule: a power of two from 64 KiB to 1 GiB. */
    private static Integer termLength(String text) {
        String key = TERM_LENGTH_OPTION.key();
        long length;
        try {
            length = SystemUtil.parseSize(key, text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a size like 64k, 1m or 16m, not '" + text + "'");
        }
        if (length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(key + " must be at most 1g, not '" + text + "'");
        }
        try {
            LogBufferDescriptor.checkTermLength((int) length);
        } catch (IllegalStateException e) {
            throw new IllegalArgumentException(key + ": " + e.getMessage(), e);
        }
        return (int) length;
    }

    /**
     * Two cores cannot spare a thread per driver agent: one shared thread (conductor, sender, receiver) that backs
     * off when idle. Four can give the network agents their own thread; more can give each agent one.
     */
    static ThreadingMode threadingFor(int cores) {
        if (cores <= 2) {
            return ThreadingMode.SHARED;
        }
        return cores <= 5 ? ThreadingMode.SHARED_NETWORK : ThreadingMode.DEDICATED;
    }

    static int streamId(int flow) {
        return STREAM_ID_BASE + flow;
    }

    /**
     * Echo mode: replies to flow i travel on stream {@code REPLY_STREAM_ID_BASE + i} (distinct from every request
     * stream, so per-stream driver counters of requests never include replies).
     */
    static final int REPLY_STREAM_ID_BASE = 0x4C52_0000;

    static int replyStreamId(int flow) {
        return REPLY_STREAM_ID_BASE + flow;
    }

    /**
     * Echo mode: the requester subscribes to flow i's replies on port {@code basePort + ports + i}, the ports right
     * after the plan's own.
     */
    static int replyPort(io.lossprobe.core.plan.Plan plan, int flow) {
        return plan.basePort() + plan.ports() + flow;
    }

    /** Echo mode needs twice the plan's ports: the reply ports must not run past 65535. */
    static void checkReplyPorts(io.lossprobe.core.plan.Plan plan) {
        if ((long) plan.basePort() + 2L * plan.ports() - 1 > 65535) {
            throw new IllegalArgumentException("aeron echo mode needs reply ports " + replyPort(plan, 0) + "-"
                + ((long) plan.basePort() + 2L * plan.ports() - 1) + " (base port + ports + flow): past port 65535; "
                + "lower --base-port");
        }
    }

    /** -1 when {@code streamId} is not one of ours. */
    static int flowOf(int streamId, int flows) {
        return flowOf(streamId, STREAM_ID_BASE, flows);
    }

    /** -1 when {@code streamId} is not {@code streamIdBase + flow} for one of the flows. */
    static int flowOf(int streamId, int streamIdBase, int flows) {
        int flow = streamId - streamIdBase;
        return flow >= 0 && flow < flows ? flow : -1;
    }

    /** A publication to {@code host:port} whose frames carry {@code sessionId} ({@link AeronSessions}). */
    String publicationChannel(String host, int port, int sessionId) {
        return publicationChannel(host, port, sessionId, null);
    }

    /**
     * {@link #publicationChannel(String, int, int)} sending from {@code sourceHost} (an ephemeral port), or from the
     * route's preferred source when null. Aeron (1.51, {@code UdpChannel.parse}) binds a unicast publication's socket
     * to its {@code control} address as given, resolved by name only; {@code interface} instead looks for a network
     * interface carrying the address, so a loopback alias (127.0.0.5, which Linux's lo answers for without listing
     * it) is refused: "Unable to find multicast or loopback interface matching criteria". With {@code endpoint} and no
     * {@code control-mode} the publication stays plain unicast (the driver's validateControlForPublication allows
     * the pair; flow control and SETUP are unicast's): the one thing {@code control} changes is the bind.
     */
    String publicationChannel(String host, int port, int sessionId, String sourceHost) {
        if (multicast != null) {
            return multicast.publication(new ChannelUriStringBuilder().media("udp"), port, sourceHost)
                .termLength(termLengthBytes).mtu(mtuBytes).sessionId(sessionId).build();
        }
        ChannelUriStringBuilder b = new ChannelUriStringBuilder().media("udp").endpoint(endpoint(host, port));
        if (sourceHost != null) {
            b.controlEndpoint(endpoint(sourceHost, 0));
        }
        return b.termLength(termLengthBytes).mtu(mtuBytes).sessionId(sessionId).build();
    }

    /**
     * Behind a NAT (docs/aeron.md, "Behind a NAT"): a dynamic multi-destination-cast publication whose control
     * socket is bound to {@code localHost} on an ephemeral port. It sends to no one until a status message arrives
     * there, then to the address and port each came from (the NAT's mapping of the subscriber's socket), frames of
     * {@code sessionId}. Flow control: Aeron gives MDC its multicast default, {@code max} with a retransmit window of
     * 4 receiver windows, where a unicast publication has {@code UnicastFlowControl} with 16; {@code max} computes
     * the sender's limit exactly as unicast does (the highest status message's position plus its window), so
     * {@code fc=max,rrwm:<unicast's>} makes the one destination's flow control and retransmits those of unicast.
     */
    String natPublicationChannel(String localHost, int sessionId) {
        return new ChannelUriStringBuilder().media("udp").controlEndpoint(endpoint(localHost, 0))
            .controlMode(io.aeron.CommonContext.MDC_CONTROL_MODE_DYNAMIC)
            .flowControl(NAT_FLOW_CONTROL).termLength(termLengthBytes).mtu(mtuBytes).sessionId(sessionId).build();
    }

    /** {@link #natPublicationChannel}'s flow control: unicast's, on a multi-destination publication. */
    static final String NAT_FLOW_CONTROL = "max,rrwm:"
        + io.aeron.driver.Configuration.unicastFlowControlRetransmitReceiverWindowMultiple();

    /**
     * The subscription of a flow whose publication is {@link #natPublicationChannel}: as
     * {@link #subscriptionChannel}, and with {@code control}, the publication's control address, where the
     * driver sends its status messages and NAKs from the subscription's own socket (which opens the NAT's way
     * back). {@code group=false}: an MDC publication's SETUP says it has group semantics, which would give the
     * image multicast's randomised NAK delays; a flow has one receiver, so it NAKs as unicast does.
     */
    String natSubscriptionChannel(String host, int port, int sessionId, String control) {
        ChannelUriStringBuilder b = new ChannelUriStringBuilder().media("udp").endpoint(endpoint(host, port))
            .controlEndpoint(control).group(Boolean.FALSE).sessionId(sessionId);
        if (!reliable) {
            b.reliable(Boolean.FALSE);
        }
        return b.build();
    }

    /**
     * A subscription on {@code host:port} to the one session {@code sessionId}: the driver makes no image for a
     * SETUP or data frame of any other session of the stream (an external driver too, without lossprobe's filter).
     */
    String subscriptionChannel(String host, int port, int sessionId) {
        ChannelUriStringBuilder b = multicast != null
            ? multicast.subscription(new ChannelUriStringBuilder().media("udp"), port, host).sessionId(sessionId)
            : new ChannelUriStringBuilder().media("udp").endpoint(endpoint(host, port)).sessionId(sessionId);
        if (!reliable) {
            b.reliable(Boolean.FALSE);
        }
        return b.build();
    }

    static String endpoint(String host, int port) {
        return io.lossprobe.core.plan.Addresses.hostPort(host, port);
    }
}
