package io.lossprobe.cli;

import io.lossprobe.control.ControlClient;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.plan.Units;
import io.lossprobe.core.result.OutputFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.RunStatus;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.Transports;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code lossprobe run}: steps every transport through the levels and writes the results. With no options it runs
 * the embedded default: senders and receivers in this process, on loopback.
 */
@Command(name = "run",
    description = {"Steps each transport through the target rates and counts loss, duplicates, reordering, late "
        + "arrivals, send refusals and kernel drops per flow and step.",
        "With no options: every transport, 48 ports on 127.0.0.1, levels 30k,100k,1M, 3s per step."},
    footer = {"", "Exit codes: 0 ok, 1 runtime failure, 2 bad usage, 130 interrupted (partial results written).", "",
        "Example: lossprobe run --transport udp,tcp --levels 10k,100k --duration 5s -o result.json", "",
        "Example: lossprobe run --target 10.0.0.5 --secret-file /etc/lossprobe/secret --transport udp -o result.json"})
public final class RunCommand extends Subcommand {
    @CommandLine.Mixin
    PlanOptions planOptions;

    @CommandLine.Mixin
    ShapeOptions shapeOptions;

    @CommandLine.Mixin
    PatternOptions patternOptions;

    @CommandLine.Mixin
    PacketOptions packetOptions;

    @Option(names = "--probe", paramLabel = "echo[:RATE]", completionCandidates = CompletionValues.Probes.class,
        description = "Beside every stream step, one echo flow at RATE (default 1k/s) on the port after the plan's, "
            + "with accounting of its own: each step records the round trip under its load (here, with --target and "
            + "--reverse; not with --bidir or --search). See docs/echo.md.")
    String probe;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE",
        description = "Results JSON, rewritten after every step; - writes it to stdout at the end (the table then "
            + "goes to stderr). Default: lossprobe-YYYYMMDD-HHMMSS.json.")
    Path output;

    @Option(names = "--stream", paramLabel = "FILE",
        description = "Also write the run as JSON lines while it goes (each step's intervals and totals, search "
            + "trials and findings); - for stdout.")
    Path stream;

    @Option(names = "--mode", defaultValue = "stream", paramLabel = "MODE",
        completionCandidates = CompletionValues.Modes.class,
        description = "stream (one way) or echo (request/response: the receiver answers every message; TPS and "
            + "round-trip percentiles, loss by direction). Default: ${DEFAULT-VALUE}.")
    String mode;

    @Option(names = "--concurrency", defaultValue = "0", paramLabel = "N",
        description = "Echo mode: at most N requests outstanding per flow (closed loop; use with --levels max). "
            + "0 = open loop on the schedule. Default: ${DEFAULT-VALUE}.")
    int concurrency;

    @Option(names = "--hlog", description = "Write each step's delay (and round-trip) histogram as an HdrHistogram "
        + "log next to the results: RESULTS.<transport>.step<N>.<delay|rtt>.hlog")
    boolean hlog;

    @Option(names = "--bind", defaultValue = "127.0.0.1", paramLabel = "ADDR",
        description = "Receivers' address (the senders' target in the embedded run). Default: ${DEFAULT-VALUE} "
            + "(::1 with -6).")
    String bind;

    @Option(names = "--target", paramLabel = "HOST[:PORT]",
        description = "Send to a 'lossprobe serve' on HOST (control port 7400 unless given); receivers run there.")
    String target;

    @Option(names = "--from", paramLabel = "HOST[:PORT]",
        description = "With --target: a test between two servers. The 'lossprobe serve' on HOST sends to the one at "
            + "--target (it connects there and sends nothing unless that serve proves the secret); this host only "
            + "drives both and writes the result.")
    String from;

    @CommandLine.Mixin
    SecretOption secret;

    @Option(names = "--reverse",
        description = "With --target: the server sends and this host receives (on --bind; unless given 0.0.0.0, "
            + "or :: when the server is reached over IPv6). The server only ever sends to this host's own address.")
    boolean reverse;

    @Option(names = "--bidir",
        description = "With --target: both directions at once, on the same plan in the same windows: this host sends "
            + "to the server on the plan's ports while the server sends to this host on the next --ports ports "
            + "(received on --bind, as with --reverse). Every step is recorded with its direction.")
    boolean bidir;

    @CommandLine.Mixin
    AddressFamilyOption family;

    @CommandLine.Mixin
    MulticastOptions multicast;

    @CommandLine.Mixin
    PolicyAfterRun policy;

    @CommandLine.Mixin
    BaselineOption baseline;

    @CommandLine.Mixin
    CheckOutputs checkOutputs;

    @CommandLine.Mixin
    QuietOption quiet;

    @Override
    int run(CommandLine cl) throws Exception {
        boolean resultsToStdout = checkOptions(cl);
        HostPort server = target == null ? null : resolveTarget();
        Map<String, String> options = planOptions.transportOptionsInEffect();
        for (Map.Entry<String, String> e : new java.util.TreeMap<>(MulticastOptions.SET_BY).entrySet()) {
            if (options.containsKey(e.getKey())) {
                // A group alone would have unicast senders and joined receivers: the flag sets both ends up.
                throw new CommandLine.ParameterException(cl, "-X " + e.getKey() + " is set by " + e.getValue()
                    + ", with a --receiver for each serve that is to " + (e.getValue().equals("--mdc") ? "take a copy"
                    : "join it"));
            }
        }
        Plan plan = buildPlan(options, server);
        if (multicast.mdc) {
            if (!plan.transports().equals(List.of("aeron"))) {
                throw new CommandLine.ParameterException(cl, "--mdc is Aeron's multi-destination-cast: give "
                    + "--transport aeron (not " + String.join(",", plan.transports()) + ")");
            }
            options = new java.util.HashMap<>(options);
            options.put("aeron.mdc", multicast.mdcAddress(cl));
            plan = buildPlan(options, server);
        } else if (multicast.given()) {
            if (!MulticastOptions.TRANSPORTS.containsAll(plan.transports())) {
                throw new CommandLine.ParameterException(cl, "--multicast sends raw UDP or Aeron: give --transport "
                    + "udp or aeron (not " + String.join(",", plan.transports()) + ")");
            }
            if (plan.transports().contains("aeron")) {
                if (multicast.source != null) {
                    throw new CommandLine.ParameterException(cl, "--source: Aeron's multicast subscriptions have "
                        + "no source-specific join; give --transport udp");
                }
                multicast.checkAeronGroup(cl);
            }
            multicast.checkLocalSource(cl);
            options = multicast.transportOptions(options, plan.transports());
            plan = buildPlan(options, server);
        }
        Map<String, Transport> available = Transports.available();
        PlanOptions.requireTransports(cl, plan, available);
        Path out = output != null ? output : Path.of("lossprobe-"
            + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + ".json");
        PrintWriter results = cl.getOut();
        PrintWriter stderr = cl.getErr();
        // With -o -, stdout carries the results JSON alone; everything for people goes to stderr.
        PrintWriter stdout = resultsToStdout ? stderr : results;
        planOptions.check(cl, options, available, plan, stderr);
        if (policy.given() && resultsToStdout) {
            throw new CommandLine.ParameterException(cl, "--policy checks a results file: give -o "
                + "a file, not -");
        }
        long packetRows = packetOptions.given() ? packetOptions.rowsPerStep(cl, plan) : 0;
        RunOutput sink = openSink(cl, plan, out, results, stdout, stderr, resultsToStdout);
        PacketsFile packets = packetOptions.given() ? openPackets(cl) : null;
        Runnable remote; // says goodbye to the server
        Measured engine;
        if (bidir) {
            BidirRun both = openBidir(cl, server, plan, options, available, sink, stderr);
            remote = both::close;
            engine = Measured.of(both);
        } else if (probe != null) {
            ProbeRun withProbe = openProbe(cl, server, plan, options, available, sink, stderr);
            if (packets != null) {
                withProbe.withPackets(new io.lossprobe.core.engine.PacketCapture(packetRows, packetOptions.every,
                    packets));
            }
            remote = withProbe::close;
            engine = new Measured(withProbe::run, withProbe::snapshot, withProbe::requestStop);
        } else if (multicast.given()) {
            MulticastRun group = openMulticast(cl, plan, options, available, sink, stderr);
            remote = group::close;
            engine = Measured.of(group.engine());
        } else if (from != null) {
            FromRun between = openFrom(cl, server, plan, options, available, sink, stderr);
            remote = between::close;
            engine = Measured.of(between.engine());
        } else {
            RemoteRun one = server != null ? openRemote(cl, server, plan, options, available, sink, stderr) : null;
            remote = one == null ? null : one::close;
            RunEngine single = one != null ? one.engine()
                : new RunEngine(plan, available, options, sink, StepHooks.NONE);
            if (packets != null) {
                single.withPackets(new io.lossprobe.core.engine.PacketCapture(packetRows, packetOptions.every,
                    packets));
            }
            engine = Measured.of(single);
        }
        sink.onWriteFailure(engine::requestStop);
        try {
            sink.writeInitial(engine.snapshot(RunStatus.RUNNING, null));
        } catch (RuntimeException e) {
            if (remote != null) {
                remote.run();
            }
            throw e;
        }

        CountDownLatch finished = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            engine.requestStop();
            try {
                finished.await(15, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "lossprobe-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        announce(stdout, plan, out, resultsToStdout);
        try {
            return measure(engine, sink, out, stdout, stderr, resultsToStdout);
        } finally {
            if (remote != null) {
                remote.run();
            }
            sink.closeProgress();
            sink.closeStream();
            if (packets != null) {
                packets.close();
                if (!quiet.quiet) {
                    stdout.println(packets.summary());
                }
            }
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // Already shutting down (Ctrl-C): the hook is running and waits for us.
            }
        }
    }

    /** The options that do not go together, refused before anything else; returns whether -o - was given. */
    private boolean checkOptions(CommandLine cl) {
        family.check(cl);
        multicast.check(cl);
        if (multicast.given()) {
            String with = target != null ? "--target (its receivers are the --receiver serves)"
                : from != null ? "--from" : reverse ? "--reverse" : bidir ? "--bidir" : probe != null ? "--probe"
                : "echo".equals(mode) ? "--mode echo" : packetOptions.given() ? "--packets"
                : shapeOptions.reshapes() ? "--search, --sizes or --interval" : null;
            if (with != null) {
                throw new CommandLine.ParameterException(cl, (multicast.mdc ? "--mdc" : "--multicast")
                    + " does not go with " + with + " yet");
            }
        }
        if (reverse && target == null) {
            throw new CommandLine.ParameterException(cl, "--reverse needs --target");
        }
        if (from != null) {
            checkFrom(cl);
        }
        if (reverse && "echo".equals(mode)) {
            throw new CommandLine.ParameterException(cl, "--mode echo does not go with --reverse");
        }
        if (bidir && target == null) {
            throw new CommandLine.ParameterException(cl, "--bidir needs --target");
        }
        if (bidir && reverse) {
            throw new CommandLine.ParameterException(cl, "--bidir sends both ways already: drop --reverse");
        }
        if (bidir && ("echo".equals(mode) || shapeOptions.reshapes() || hlog)) {
            throw new CommandLine.ParameterException(cl,
                "--bidir does not go with --mode echo, --search, --sizes, --interval or --hlog yet");
        }
        if (reverse && shapeOptions.reshapes()) {
            throw new CommandLine.ParameterException(cl,
                "--reverse does not go with --search, --sizes or --interval yet");
        }
        if (packetOptions.given() && (bidir || (target != null && !reverse))) {
            throw new CommandLine.ParameterException(cl, "--packets needs this host's receivers: the embedded run "
                + "or --target with --reverse" + (bidir ? " (not --bidir yet)" : ""));
        }
        if (probe != null) {
            probeRate(cl);
            String with = bidir ? "--bidir" : "echo".equals(mode) ? "--mode echo"
                : shapeOptions.search != null ? "--search" : null;
            if (with != null) {
                throw new CommandLine.ParameterException(cl, "--probe runs beside a run's stream steps: "
                    + "not with " + with + " yet");
            }
        }
        if (shapeOptions.search != null && "echo".equals(mode)) {
            throw new CommandLine.ParameterException(cl, "--search goes with --mode stream");
        }
        boolean resultsToStdout = output != null && output.toString().equals("-");
        if (resultsToStdout && stream != null && stream.toString().equals("-")) {
            throw new CommandLine.ParameterException(cl,
                "-o - and --stream - both want stdout: give one of them a file");
        }
        if (!policy.given() && (baseline.baseline != null || checkOutputs.junit != null)) {
            throw new CommandLine.ParameterException(cl, "--baseline and --junit go with --policy");
        }
        policy.requireReadable(cl); // a bad policy fails before any traffic
        checkOutputs.requireNotInput(cl, java.util.Arrays.asList(policy.policy, baseline.baseline, secret.secretFile),
            output, stream);
        return resultsToStdout;
    }

    /** Where the run's results and progress go; every output path is checked before any traffic. */
    private RunOutput openSink(CommandLine cl, Plan plan, Path out, PrintWriter results, PrintWriter stdout,
                               PrintWriter stderr, boolean resultsToStdout) throws Exception {
        RunOutput sink = new RunOutput(out, stdout, stderr, !quiet.quiet, hlog);
        sink.ipv6(plan.bindAddress().contains(":"));
        if (resultsToStdout) {
            sink.toStdout(results);
        }
        if (stream != null) {
            sink.stream(openStream(results));
        }
        // Every output path is checked before any traffic: a typo must not cost a long run.
        if (!resultsToStdout) {
            Inputs.requireWritable(cl, out, "results to");
        }
        checkOutputs.requireWritable(cl);
        if (hlog && sink.stream()) {
            throw new CommandLine.ParameterException(cl, "--hlog writes its logs beside the results: "
                + "give -o a file, not the device " + out);
        }
        return sink;
    }

    private long probeRate(CommandLine cl) {
        try {
            return ProbeRun.parse(probe);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
    }

    /** {@code --packets FILE}, created before any traffic (and checked not to be one of the run's inputs). */
    private PacketsFile openPackets(CommandLine cl) {
        Path file = packetOptions.packets;
        Inputs.requireWritable(cl, file, "--packets to");
        Inputs.requireNotInputs(cl, List.of(file), java.util.Arrays.asList(policy.policy, baseline.baseline,
            secret.secretFile));
        for (Path other : java.util.Arrays.asList(output, stream, checkOutputs.prometheus, checkOutputs.junit)) {
            if (other != null && other.toAbsolutePath().normalize().equals(file.toAbsolutePath().normalize())) {
                throw new CommandLine.ParameterException(cl, "--packets " + file + " is another output of the run "
                    + "too: give it a file of its own");
            }
        }
        try {
            return PacketsFile.create(file);
        } catch (IOException e) {
            throw new CommandLine.ParameterException(cl, "cannot write --packets " + file + ": " + e.getMessage());
        }
    }

    /**
     * {@code --target} with its host resolved once, in the family {@code -4} / {@code -6} chose: the address the
     * control connection and the data go to.
     */
    private HostPort resolveTarget() {
        HostPort typed = HostPort.parse(target, ControlClient.DEFAULT_PORT);
        return new HostPort(family.resolve(typed.host(), null), typed.port());
    }

    /** {@code --from}: what it needs and what it does not go with yet. */
    private void checkFrom(CommandLine cl) {
        if (target == null) {
            throw new CommandLine.ParameterException(cl, "--from needs --target: the serve that receives");
        }
        String with = reverse ? "--reverse" : bidir ? "--bidir" : probe != null ? "--probe"
            : packetOptions.given() ? "--packets" : "echo".equals(mode) ? "--mode echo"
            : shapeOptions.reshapes() ? "--search, --sizes or --interval" : hlog ? "--hlog" : null;
        if (with != null) {
            throw new CommandLine.ParameterException(cl, "--from does not go with " + with + " yet");
        }
        if (spec.commandLine().getParseResult().hasMatchedOption("--bind")) {
            throw new CommandLine.ParameterException(cl, "--from runs no receivers here: drop --bind (each serve "
                + "binds its own)");
        }
    }

    /** {@code --from} resolved once in the family -4 / -6 chose, as --target is. */
    private HostPort resolveFrom() {
        HostPort typed = HostPort.parse(from, ControlClient.DEFAULT_PORT);
        return new HostPort(family.resolve(typed.host(), "--from"), typed.port());
    }

    /** {@code --from}: two servers' sessions, A's senders and B's receivers. */
    private FromRun openFrom(CommandLine cl, HostPort server, Plan plan, Map<String, String> options,
                             Map<String, Transport> available, RunOutput sink, PrintWriter stderr) throws Exception {
        HostPort sender = resolveFrom();
        if (sender.equals(server)) {
            throw new CommandLine.ParameterException(cl, "--from and --target are the same serve (" + server
                + "): a serve cannot send to itself");
        }
        try {
            return FromRun.open(sender, server, secret.load(stderr, "lossprobe: "), plan, options, available, sink,
                RemoteRun.CONNECT_TIMEOUT_MS);
        } catch (java.net.UnknownHostException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
    }

    /** {@code --multicast}: this host sends to the group, every {@code --receiver} serve receives. */
    private MulticastRun openMulticast(CommandLine cl, Plan plan, Map<String, String> options,
                                       Map<String, Transport> available, RunOutput sink, PrintWriter stderr)
        throws Exception {
        try {
            return MulticastRun.open(multicast.receivers(), multicast.group, secret.load(stderr, "lossprobe: "), plan,
                options, available, sink, RemoteRun.CONNECT_TIMEOUT_MS);
        } catch (java.net.UnknownHostException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
    }

    /** {@code --target}: the run with its other half on a {@code lossprobe serve} at {@code server}. */
    private RemoteRun openRemote(CommandLine cl, HostPort server, Plan plan, Map<String, String> options,
                                 Map<String, Transport> available, RunOutput sink, PrintWriter stderr)
        throws Exception {
        try {
            return RemoteRun.open(server, secret.load(stderr, "lossprobe: "), plan, options, available, reverse, sink,
                RemoteRun.CONNECT_TIMEOUT_MS);
        } catch (java.net.UnknownHostException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
    }

    /** {@code --probe}: the stream and its probe, here or as two sessions with the server at {@code server}. */
    private ProbeRun openProbe(CommandLine cl, HostPort server, Plan plan, Map<String, String> options,
                               Map<String, Transport> available, RunOutput sink, PrintWriter stderr)
        throws Exception {
        // The probe's flow is on the port after the plan's; Aeron's echo replies come back on the one after that.
        if ((long) plan.basePort() + plan.ports() + 1 > 65535) {
            throw new CommandLine.ParameterException(cl, "--probe takes ports " + (plan.basePort() + plan.ports())
                + " and " + (plan.basePort() + plan.ports() + 1) + ": that runs past port 65535");
        }
        long rate = probeRate(cl);
        if (server == null) {
            return ProbeRun.embedded(plan, rate, available, options, sink);
        }
        try {
            return ProbeRun.remote(server, secret.load(stderr, "lossprobe: "), plan, reverse, rate, options,
                available, sink, RemoteRun.CONNECT_TIMEOUT_MS);
        } catch (java.net.UnknownHostException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
    }

    /** {@code --bidir}: both directions' sessions with the server at {@code server}. */
    private BidirRun openBidir(CommandLine cl, HostPort server, Plan plan, Map<String, String> options,
                               Map<String, Transport> available, RunOutput sink, PrintWriter stderr)
        throws Exception {
        if ((long) plan.basePort() + 2L * plan.ports() - 1 > 65535) {
            throw new CommandLine.ParameterException(cl, "--bidir takes " + 2 * plan.ports()
                + " ports from --base-port " + plan.basePort() + ": that runs past port 65535");
        }
        try {
            return BidirRun.open(server, secret.load(stderr, "lossprobe: "), plan, receivers(server, true), options,
                available, sink, RemoteRun.CONNECT_TIMEOUT_MS);
        } catch (java.net.UnknownHostException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
    }

    /** What a run measures with: one engine, or the two directions of {@code --bidir}. */
    private record Measured(java.util.concurrent.Callable<RunResult> runner,
                            java.util.function.BiFunction<RunStatus, String, RunResult> snapshots, Runnable stopper) {
        static Measured of(RunEngine engine) {
            return new Measured(engine::run, engine::snapshot, engine::requestStop);
        }

        static Measured of(BidirRun both) {
            return new Measured(both::run, both::snapshot, both::requestStop);
        }

        RunResult run() throws Exception {
            return runner.call();
        }

        RunResult snapshot(RunStatus status, String error) {
            return snapshots.apply(status, error);
        }

        void requestStop() {
            stopper.run();
        }
    }

    /** The run's first line: what it measures and where the results go. */
    private void announce(PrintWriter stdout, Plan plan, Path out, boolean resultsToStdout) {
        String to = multicast.mdc ? "to " + multicast.receivers.size() + " receivers by multi-destination-cast"
            : multicast.given() ? "to group " + HostPort.format(multicast.group, plan.basePort()) + " ("
            + multicast.receivers.size() + " receivers)" : "from " + HostPort.format(plan.bindAddress(),
            plan.basePort());
        stdout.printf("lossprobe: %s over %d ports %s%s, %s%s, %s per step%s; results -> %s%n",
            String.join(",", plan.transports()), plan.ports(), to,
            bidir ? " and back on the " + plan.ports() + " from " + (plan.basePort() + plan.ports())
                : probe != null ? " and an echo probe at " + Units.formatRate(ProbeRun.parse(probe)) + "/s on "
                + (plan.basePort() + plan.ports()) : "",
            plan.levels().isEmpty() ? "" : "levels " + planOptions.levels + (plan.search() == null ? "" : ", "),
            plan.search() == null ? "" : "search " + String.join(",", plan.search().criteria()),
            planOptions.duration, plan.sizes().size() > 1 ? ", sizes " + plan.sizes() : "",
            resultsToStdout ? "stdout" : out);
        stdout.flush();
    }

    /** Runs the engine and says how it went; returns the exit status. */
    private int measure(Measured engine, RunOutput sink, Path out, PrintWriter stdout, PrintWriter stderr,
                        boolean resultsToStdout) throws Exception {
        RunResult result;
        try {
            result = engine.run();
        } catch (Exception e) {
            textfileOfFailedRun(out, stderr);
            throw e;
        }
        if (sink.writeFailure() != null) {
            stderr.println("lossprobe: " + result.steps().size() + " step(s) measured; "
                + (sink.resultsWritten() ? out + " holds them, status failed"
                : sink.fileStatus() == null ? "nothing written to " + out
                : out + " holds fewer, status " + sink.fileStatus()));
            textfileOfFailedRun(out, stderr);
            return 1;
        }
        if (result.status() == RunStatus.INTERRUPTED) {
            stderr.println("lossprobe: interrupted; " + result.steps().size() + " completed step(s) written to "
                + out);
            textfileOfFailedRun(out, stderr);
            return 130;
        }
        // The answer after the table (the rows scrolled by as they came): a sentence per transport.
        for (String line : io.lossprobe.analysis.Verdict.of(result)) {
            (resultsToStdout ? stderr : stdout).println("verdict: " + line);
        }
        stdout.println("results written to " + (resultsToStdout ? "stdout" : out));
        stdout.flush();
        List<String> lost = MulticastRun.lostReceivers(result);
        if (!lost.isEmpty()) {
            stderr.println("lossprobe: " + lost.size() + " receiver(s) lost during the run, their steps from then "
                + "on counted as lost in full: " + String.join("; ", lost));
        }
        if (policy.given()) {
            return checkInline(out); // the check fails a step with a lost receiver
        }
        if (checkOutputs.prometheus != null) {
            writeTextfile(out);
        }
        return lost.isEmpty() ? 0 : 1;
    }

    /** The textfile without a check: the run's numbers, labelled with the target as typed. */
    private void writeTextfile(Path results) throws IOException {
        try {
            io.lossprobe.analysis.LoadedResult loaded = io.lossprobe.analysis.LoadedResult.read(results);
            io.lossprobe.analysis.PrometheusTextfile.write(checkOutputs.prometheus, loaded,
                io.lossprobe.analysis.RunLabels.of(loaded.run()).withTarget(targetLabel()), checkOutputs.name,
                java.util.Optional.empty());
        } catch (io.lossprobe.analysis.InputException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /** A run that failed or was interrupted still updates the textfile, so its status shows; best effort. */
    private void textfileOfFailedRun(Path results, PrintWriter stderr) {
        if (checkOutputs.prometheus == null || !Files.isRegularFile(results)) {
            return;
        }
        try {
            writeTextfile(results);
        } catch (IOException | RuntimeException e) {
            stderr.println("lossprobe: cannot write " + checkOutputs.prometheus + ": " + e.getMessage());
        }
    }

    /**
     * --target as {@code host:port} (the default port when none was typed), for the textfile's target label: two
     * servers on one host are two targets. Null for a run on this host.
     */
    /** The textfile's {@code target}: the serve as typed, or {@code A:PORT->B:PORT} for {@code --from A}. */
    private String targetLabel() {
        if (target == null) {
            return null;
        }
        String to = HostPort.parse(target, ControlClient.DEFAULT_PORT).toString();
        return from == null ? to : HostPort.parse(from, ControlClient.DEFAULT_PORT) + "->" + to;
    }

    /** The same check as 'lossprobe check --policy ...' on the file just written; its exit code is ours. */
    private int checkInline(Path results) {
        List<String> more = new ArrayList<>();
        if (baseline.baseline != null) {
            more.addAll(List.of("--baseline", baseline.baseline.toString()));
        }
        if (checkOutputs.prometheus != null && target != null) {
            more.addAll(List.of("--target-label", targetLabel()));
        }
        return policy.check(spec.commandLine(), results, checkOutputs, more);
    }

    private Plan buildPlan(Map<String, String> options, HostPort server) {
        Plan plan = patternOptions.apply(planOptions.plan(receivers(server), mode, concurrency, options));
        if (!shapeOptions.reshapes() && shapeOptions.latencyAt == null) {
            return plan;
        }
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        return shapeOptions.shape(plan, parsed.hasMatchedOption("--levels"), parsed.hasMatchedOption("--size"));
    }

    /**
     * Where the receivers are: the server's address forward; else --bind (resolved in the family of -4 / -6), by
     * default loopback for the embedded run and every address of the control connection's family for --reverse
     * (the server sends to this host's address as it sees it).
     */
    private String receivers(HostPort server) {
        return receivers(server, reverse);
    }

    /** {@link #receivers(HostPort)} for one direction: {@code reverse}, this host receives. */
    private String receivers(HostPort server, boolean reverse) {
        if (server != null && !reverse) {
            return server.host();
        }
        if (!spec.commandLine().getParseResult().hasMatchedOption("--bind")) {
            return reverse ? AddressFamilyOption.wildcardOf(server.host()) : family.loopback();
        }
        String receivers = family.given() ? family.resolve(bind, "--bind") : bind;
        boolean literal = receivers.matches("[0-9.]+") || receivers.indexOf(':') >= 0;
        if (reverse && literal && !AddressFamilyOption.wildcardOf(receivers)
            .equals(AddressFamilyOption.wildcardOf(server.host()))) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--bind " + receivers + " and --target "
                + server + " are of different address families: a --reverse server sends to the address it sees "
                + "the control connection come from");
        }
        return receivers;
    }

    /** The --stream target: stdout, or a file created (or emptied) now, before any traffic. */
    private java.io.OutputStream openStream(PrintWriter stdoutWriter) {
        if (stream.toString().equals("-")) {
            return new java.io.OutputStream() {
                @Override
                public void write(int b) {
                    stdoutWriter.write(b);
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    stdoutWriter.write(new String(b, off, len, java.nio.charset.StandardCharsets.UTF_8));
                }

                @Override
                public void flush() {
                    stdoutWriter.flush();
                }
            };
        }
        Path file = stream;
        Inputs.requireWritable(spec.commandLine(), file, "--stream");
        try {
            return new java.io.BufferedOutputStream(OutputFiles.openStream(file));
        } catch (IOException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "cannot write --stream " + file + ": "
                + (e instanceof OutputFiles.Refused ? e.getMessage() : LossprobeCommand.describe(e)));
        }
    }
}
