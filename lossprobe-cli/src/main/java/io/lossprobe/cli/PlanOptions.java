package io.lossprobe.cli;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.plan.Units;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.TransportOptions;
import io.lossprobe.core.transport.Transports;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options that shape a run's plan (transports, flows, levels, timing, size, socket and transport settings),
 * declared once for {@code run} and {@code mesh}. What differs per command (where the receivers are, the mode) is
 * passed to {@link #plan}.
 */
final class PlanOptions {
    @Option(names = "--transport", split = ",", paramLabel = "NAME",
        completionCandidates = CompletionValues.TransportNames.class,
        description = "Transports to run, in order (udp,tcp,aeron). Default: all available.")
    List<String> transports;

    @Option(names = "--ports", defaultValue = "48", paramLabel = "N",
            description = "Flows (port pairs). Default: ${DEFAULT-VALUE}.")
    int ports;

    @Option(names = "--base-port", defaultValue = "40000", paramLabel = "PORT",
        description = "First port; flow i uses base-port + i. Default: ${DEFAULT-VALUE}.")
    int basePort;

    @Option(names = "--levels", defaultValue = "30k,100k,1M", paramLabel = "RATES",
        description = "Target rates in messages/s over all flows, comma-separated: 30k, 2.5M, max. "
            + "Default: ${DEFAULT-VALUE}.")
    String levels;

    @Option(names = "--duration", defaultValue = "3s", paramLabel = "TIME",
        description = "Measured window per step (500ms, 5s, 2m). Default: ${DEFAULT-VALUE}.")
    String duration;

    @Option(names = "--warmup", defaultValue = "1s", paramLabel = "TIME",
        description = "Warm-up before each window, sent but not counted. Default: ${DEFAULT-VALUE}.")
    String warmup;

    @Option(names = "--drain", defaultValue = "1s", paramLabel = "TIME",
        description = "Tmax: how long to wait for stragglers after the window; later arrivals are late. "
            + "Default: ${DEFAULT-VALUE}.")
    String drain;

    @Option(names = "--size", defaultValue = "64", paramLabel = "BYTES",
        description = "Message size including the 48-byte header (64, 1KiB). Default: ${DEFAULT-VALUE}.")
    String size;

    @Option(names = "--size-mix", paramLabel = "MIX",
        description = "Sizes mixed within every step, as SIZE:WEIGHT,... (64:7,570:4,1518:1) or imix (that mix); "
            + "each message's size follows from its sequence number, its receiver checks it, and every step counts "
            + "sent, received and lost per size. Not with --size, --sizes or --mode echo. Default: one size.")
    String sizeMix;

    @Option(names = "--rcvbuf", paramLabel = "BYTES",
            description = "Receive socket buffer to request (capped by net.core.rmem_max). Default: 4MiB.")
    String rcvbuf;

    @Option(names = "--sndbuf", paramLabel = "BYTES",
            description = "Send socket buffer to request (capped by net.core.wmem_max). Default: 4MiB.")
    String sndbuf;

    @Option(names = "--udp-io", defaultValue = "auto", paramLabel = "IO",
        completionCandidates = CompletionValues.UdpIo.class,
        description = "UDP I/O: auto, epoll (sendmmsg/recvmmsg) or nio. Default: ${DEFAULT-VALUE}.")
    String udpIo;

    @Option(names = "--timing", paramLabel = "TIMING", completionCandidates = CompletionValues.Timings.class,
        description = "default (threads sleep between events: modest CPU) or precision (the send loop spins the last "
            + "stretch to each intended time and receiving threads busy-poll, with kernel receive timestamps where "
            + "available: a core each while a step runs; UDP). Default: default.")
    String timing;

    @Option(names = "--dscp", paramLabel = "CLASS[,CLASS...]",
        description = "Traffic classes to mark the data with (EF, AF11-AF43, CS0-CS7 or 0-63), spread over the "
            + "flows: flow i gets class i mod n, so one run compares classes. Both directions; UDP and TCP (Aeron "
            + "cannot set it). UDP receivers read the class each datagram arrived with and flag re-marked flows. "
            + "Default: not set.")
    String dscp;

    @Option(names = {"-X", "--transport-option"}, paramLabel = "KEY=VALUE",
        completionCandidates = CompletionValues.TransportOptionKeys.class,
        description = "A transport setting, repeatable: tcp.nodelay=false, aeron.reliable=false, aeron.dir=PATH, ... "
            + "Checked before any traffic; 'lossprobe options' lists them all. Between hosts, those that apply on a "
            + "server are sent there too.")
    Map<String, String> transportOptions = new LinkedHashMap<>();

    /** Every transport {@code plan} names is one of the {@code available} ones, else bad usage. */
    static void requireTransports(CommandLine cl, Plan plan, Map<String, Transport> available) {
        for (String t : plan.transports()) {
            if (!available.containsKey(t)) {
                throw new CommandLine.ParameterException(cl, "unknown transport '" + t + "' (available: "
                    + String.join(", ", available.keySet()) + ")");
            }
        }
    }

    /**
     * {@code options} (in effect) checked against every available transport's declarations, before any traffic:
     * an unknown key or a bad value is bad usage, one line; a -X for a transport {@code plan} does not use gets a
     * note on {@code err}.
     */
    void check(CommandLine cl, Map<String, String> options, Map<String, Transport> available, Plan plan,
               PrintWriter err) {
        try {
            TransportOptions.validate(options, available.values());
            for (Transport t : RemoteRun.transportsOf(plan, available)) {
                t.checkOptions(options);
            }
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
        if (!plan.dscp().isEmpty() && plan.transports().contains("aeron")) {
            throw new CommandLine.ParameterException(cl, io.lossprobe.aeron.AeronTransport.DSCP_REFUSAL);
        }
        for (String unused : TransportOptions.unused(transportOptions, RemoteRun.transportsOf(plan, available))) {
            err.println("lossprobe: note: -X " + unused + " is for a transport this run does not use");
        }
    }

    /** The -X options plus those the transport flags stand for (--udp-io, --timing, --rcvbuf, --sndbuf). */
    Map<String, String> transportOptionsInEffect() {
        Map<String, String> options = new HashMap<>(transportOptions);
        options.put("udp.io", udpIo);
        if (timing != null) {
            options.put(io.lossprobe.core.transport.Timing.KEY, timing);
        }
        if (rcvbuf != null) {
            options.put("rcvbuf", Long.toString(Units.parseBytes(rcvbuf, "--rcvbuf")));
        }
        if (sndbuf != null) {
            options.put("sndbuf", Long.toString(Units.parseBytes(sndbuf, "--sndbuf")));
        }
        return options;
    }

    /**
     * The plan these options describe.
     *
     * @param receivers the receivers' address (the senders' target)
     * @throws IllegalArgumentException with one line for a bad level, size or time
     */
    Plan plan(String receivers, String mode, int concurrency, Map<String, String> options) {
        List<Level> parsed = new ArrayList<>();
        for (String l : levels.split(",")) {
            parsed.add(Level.parse(l.trim()));
        }
        long sizeBytes = Units.parseBytes(size, "--size");
        List<String> chosen = transports == null || transports.isEmpty()
            ? new ArrayList<>(Transports.available().keySet())
            : new ArrayList<>(new LinkedHashSet<>(transports.stream().map(String::trim).toList()));
        return new Plan(chosen, ports, basePort, parsed, Units.parseDurationNs(duration, "--duration"),
            Units.parseDurationNs(warmup, "--warmup"), Units.parseDurationNs(drain, "--drain"),
            (int) Math.min(Integer.MAX_VALUE, sizeBytes), receivers, mode, concurrency, options)
            .withDscp(dscp == null ? List.of() : io.lossprobe.core.plan.Dscp.parseList(dscp))
            .withSizeMix(mixWithoutSize());
    }

    /** {@code --size-mix}, refused beside a {@code --size} of its own (the mix sets every message's size). */
    private String mixWithoutSize() {
        if (sizeMix != null && !size.equals("64")) {
            throw new IllegalArgumentException("--size-mix sets each message's size: drop --size " + size);
        }
        return sizeMix;
    }
}
