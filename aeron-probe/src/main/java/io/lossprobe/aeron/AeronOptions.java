package io.lossprobe.aeron;

import io.aeron.ChannelUriStringBuilder;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.LogBufferDescriptor;
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
 */
record AeronOptions(String aeronDir, boolean reliable, int termLengthBytes, int mtuBytes, ThreadingMode threading,
                    long connectTimeoutMs) {
    static final String DIR = "aeron.dir";
    static final String RELIABLE = "aeron.reliable";
    static final String TERM_LENGTH = "aeron.termLength";
    static final String MTU = "aeron.mtu";
    static final String THREADING = "aeron.threading";
    static final String CONNECT_TIMEOUT_MS = "aeron.connectTimeoutMs";

    static final int DEFAULT_TERM_LENGTH_BYTES = 1024 * 1024;
    static final int DEFAULT_MTU_BYTES = 1408;
    /** Stream ids are {@code STREAM_ID_BASE + flow}, so per-stream driver counters map back to flows. */
    static final int STREAM_ID_BASE = 0x4C50_0000;

    static AeronOptions parse(Map<String, String> options) {
        String dir = options.get(DIR);
        boolean reliable = parseBoolean(RELIABLE, options.getOrDefault(RELIABLE, "true"));
        int termLength = (int) SystemUtil.parseSize(TERM_LENGTH,
            options.getOrDefault(TERM_LENGTH, Integer.toString(DEFAULT_TERM_LENGTH_BYTES)));
        try {
            LogBufferDescriptor.checkTermLength(termLength);
        } catch (IllegalStateException e) {
            throw new IllegalArgumentException(TERM_LENGTH + ": " + e.getMessage(), e);
        }
        int mtu = Integer.parseInt(options.getOrDefault(MTU, Integer.toString(DEFAULT_MTU_BYTES)));
        if (mtu < 64 || mtu > 65504 || mtu % 32 != 0) {
            throw new IllegalArgumentException(MTU + " must be a multiple of 32 between 64 and 65504, not " + mtu);
        }
        String threadingOption = options.get(THREADING);
        ThreadingMode threading = threadingOption == null
            ? threadingFor(Runtime.getRuntime().availableProcessors())
            : ThreadingMode.valueOf(threadingOption.toUpperCase(Locale.ROOT));
        long connectTimeoutMs = Long.parseLong(options.getOrDefault(CONNECT_TIMEOUT_MS, "10000"));
        return new AeronOptions(dir, reliable, termLength, mtu, threading, connectTimeoutMs);
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

    private static boolean parseBoolean(String key, String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(key + " must be true or false, not '" + value + "'");
        };
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

    String publicationChannel(String host, int port) {
        return new ChannelUriStringBuilder().media("udp").endpoint(endpoint(host, port))
            .termLength(termLengthBytes).mtu(mtuBytes).build();
    }

    String subscriptionChannel(String host, int port) {
        ChannelUriStringBuilder b = new ChannelUriStringBuilder().media("udp").endpoint(endpoint(host, port));
        if (!reliable) {
            b.reliable(Boolean.FALSE);
        }
        return b.build();
    }

    private static String endpoint(String host, int port) {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
