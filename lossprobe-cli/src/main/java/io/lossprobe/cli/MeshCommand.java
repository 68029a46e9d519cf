package io.lossprobe.cli;

import io.lossprobe.analysis.MeshFiles;
import io.lossprobe.analysis.MeshResult;
import io.lossprobe.analysis.MeshResult.Host;
import io.lossprobe.control.Auth;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.plan.Units;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.Transports;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code lossprobe mesh}: probes many pairs of hosts (each running {@code lossprobe serve}) with one plan and writes
 * one results file with a run result per pair. See docs/mesh.md.
 */
@Command(name = "mesh",
    subcommands = {MeshMergeCommand.class},
    description = {"Probes many pairs of hosts with one plan, so a bad link, switch port or host stands out in a "
        + "source-by-destination matrix.",
        "",
        "'lossprobe report', 'lossprobe check' and Prometheus metrics read the results. Every host runs "
            + "'lossprobe serve' with the shared secret.",
        "",
        "Host list: --hosts-file (lines 'NAME ADDRESS[:PORT]' or 'ADDRESS[:PORT]', # comments), --host, or "
            + "--hosts-dns (every address of a DNS name, e.g. a Kubernetes headless Service).",
        "",
        "Pairs: --pairs full (every ordered pair), ring (each host to the next), targets (each host to --targets), "
            + "sample:K (each host to K others, rotated by --seed).",
        "",
        "Schedule: pairs run in rounds in which no host is in two pairs (as sender or receiver), at most --parallel "
            + "at a time. With --drive this process runs every pair, each source's serve sending to its target's, "
            + "back to back. Otherwise it runs the pairs whose source is this host (--as-source). When every source is "
            + "here, rounds run back to back. Otherwise run 'lossprobe mesh' on every source host with the same "
            + "hosts, pairs and plan and the same --start-at: round r then begins at START + r x --slot on each "
            + "(counted from START on the monotonic clock: a later step of the wall clock moves no round), and "
            + "'lossprobe mesh merge' joins their files.",
        "",
        "Output: one JSON file (-o) with every pair's status (complete, failed, skipped) and run result; a pair "
            + "that fails (host down, refused) is a result, not an abort. One line per pair and step is printed."},
    footer = {"", "Exit codes: 0 the mesh ran (whatever its pairs found), 1 runtime failure or (with --policy) a "
        + "limit failed, 2 bad usage, 130 interrupted (finished pairs written).",
        "", "Example: lossprobe mesh --hosts-file hosts.txt --secret-file /etc/lossprobe/secret --transport udp "
            + "--levels 10k --duration 5s -o mesh.json && lossprobe report mesh.json"})
public final class MeshCommand extends Subcommand {
    @Option(names = "--hosts-file", paramLabel = "FILE", description = "The hosts, one a line: NAME ADDRESS[:PORT] "
        + "or ADDRESS[:PORT] (control port 7400 unless given).")
    Path hostsFile;

    @Option(names = "--host", paramLabel = "[NAME=]ADDRESS[:PORT]", description = "A host, repeatable (after "
        + "those of --hosts-file).")
    List<String> hostFlags = new ArrayList<>();

    @Option(names = "--hosts-dns", paramLabel = "NAME[:PORT]", description = "Every address NAME resolves to is a "
        + "host, named by its address, sorted (a headless Service: lossprobe-serve.lossprobe.svc).")
    String hostsDns;

    @Option(names = "--pairs", defaultValue = "full", paramLabel = "WHICH",
        completionCandidates = CompletionValues.Pairs.class,
        description = "full, ring, targets or sample:K. Default: ${DEFAULT-VALUE}.")
    String pairs;

    @Option(names = "--targets", split = ",", paramLabel = "NAME", description = "With --pairs targets: the hosts "
        + "every host probes.")
    List<String> targets;

    @Option(names = "--seed", paramLabel = "N", description = "With --pairs sample:K: picks the pairs; with "
        + "--pattern poisson: the send times. Default: today's UTC date as YYYYMMDD, the same on every host and new "
        + "every day.")
    Long seed;

    @Option(names = "--pattern", paramLabel = "PATTERN", completionCandidates = CompletionValues.Patterns.class,
        description = "How each pair's steps spread their messages over time, as with run: constant, burst:N, "
            + "burst:N/INTERVAL, poisson (from --seed) or onoff:ON/OFF. See docs/patterns.md. Default: constant.")
    String pattern;

    @Option(names = "--as-source", split = ",", paramLabel = "NAME", description = "Run the pairs of these sources "
        + "here. Default: auto, the hosts whose address belongs to this host.")
    List<String> asSource;

    @Option(names = "--drive", description = "Run every pair from here, as 'run --from SOURCE --target TARGET': this "
        + "host only drives the serves (it needs to reach each one's control port) and sends no data; rounds run "
        + "back to back, so no --start-at, no mesh on the other hosts and nothing to merge.")
    boolean drive;

    @Option(names = "--start-at", paramLabel = "TIME", description = "Round 0 begins at TIME on every host: "
        + "2026-12-01T03:05:00Z, or HH:MM[:SS] UTC (the nearest such time, within 12 hours). Needed when other "
        + "hosts run pairs too.")
    String startAt;

    @Option(names = "--slot", paramLabel = "TIME", description = "Length of a round with --start-at. Default: the "
        + "plan's length plus set-up (" + MeshSchedule.PAIR_OVERHEAD_MS / 1000 + "s a pair, "
        + MeshSchedule.TRANSPORT_OVERHEAD_MS / 1000 + "s a transport, " + MeshSchedule.STEP_OVERHEAD_MS
        + "ms a step) plus twice the slack, rounded up to a second.")
    String slot;

    @Option(names = "--slack", defaultValue = "2s", paramLabel = "TIME", description = "With --start-at: how far "
        + "the hosts' clocks may differ at the start. A pair starting later than this in its round runs only if "
        + "its planned length still ends by the round's end less the slack, else it is skipped. Default: "
        + "${DEFAULT-VALUE}.")
    String slack;

    @Option(names = "--parallel", defaultValue = "0", paramLabel = "N", description = "At most N pairs at once "
        + "(0: as many as hosts allow, one pair per host). Default: ${DEFAULT-VALUE}.")
    int parallel;

    @Option(names = "--connect-timeout", defaultValue = "5s", paramLabel = "TIME", description = "How long to wait "
        + "for a host's serve before the pair fails. Default: ${DEFAULT-VALUE}.")
    String connectTimeout;

    @Option(names = "--dry-run", description = "Print the schedule (rounds, slot, how long) and run nothing.")
    boolean dryRun;

    @CommandLine.Mixin
    SecretOption secret;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "Results, rewritten after every round; "
        + "a directory gets the default name in it. Default: lossprobe-mesh-[SOURCE-]YYYYMMDD-HHMMSS.json (UTC; "
        + "SOURCE when one source runs here).")
    Path output;

    @Option(names = "--flows", description = "Keep each pair's per-flow results (by default only the steps' "
        + "totals are kept: a mesh file grows with pairs x flows).")
    boolean flows;

    @CommandLine.Mixin
    PolicyAfterRun policy;

    @CommandLine.Mixin
    CheckOutputs checkOutputs;

    @CommandLine.Mixin
    QuietOption quiet;

    @CommandLine.Mixin
    PlanOptions planOptions;

    @CommandLine.Mixin
    AddressFamilyOption family;

    private final Clock clock = Clock.systemUTC();
    private final MeshClock meshClock = MeshClock.system();
    private final Set<RunEngine> running = ConcurrentHashMap.newKeySet();
    private volatile boolean interrupted;

    @Override
    int run(CommandLine cl) throws Exception {
        checkOptions(cl);
        List<Host> hosts = MeshHosts.check(hosts());
        long seedValue = seed != null ? seed
            : Long.parseLong(LocalDate.now(ZoneOffset.UTC).format(DateTimeFormatter.BASIC_ISO_DATE));
        List<MeshPairs.Link> links = MeshPairs.select(hosts, pairs, targets, seedValue);
        List<List<MeshPairs.Link>> rounds = MeshSchedule.rounds(links, parallel);
        Map<String, String> options = planOptions.transportOptionsInEffect();
        // Checks the plan options (and the pattern against the levels) before anything runs.
        java.util.function.Function<String, Plan> planFor = address -> planOptions.plan(address, "stream", 0,
            options).withPattern(pattern, seedValue);
        Plan plan;
        try {
            plan = planFor.apply(hosts.get(0).address());
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
        Map<String, Transport> available = Transports.available();
        PlanOptions.requireTransports(cl, plan, available);
        planOptions.check(cl, options, available, plan, cl.getErr());
        long slackMs = Units.parseDurationNs(slack, "--slack") / 1_000_000;
        long slotMs = slot != null ? Units.parseDurationNs(slot, "--slot") / 1_000_000
            : MeshSchedule.estimateSlotMs(plan, slackMs);
        Instant start = startAt == null ? null : MeshSchedule.parseStart(startAt, clock.instant());
        Set<String> local = drive ? allSources(links) : localSources(hosts);
        Set<String> sourcesElsewhere = new LinkedHashSet<>();
        links.stream().map(MeshPairs.Link::source).filter(s -> !local.contains(s)).forEach(sourcesElsewhere::add);
        PrintWriter out = cl.getOut();
        String selection = pairs.strip().toLowerCase(Locale.ROOT);
        long localPairs = links.stream().filter(l -> local.contains(l.source())).count();
        out.printf("lossprobe mesh: %d hosts, %s: %d pairs in %d rounds%s; %s; %s%n", hosts.size(), selection,
            links.size(), rounds.size(), parallel > 0 ? " of at most " + parallel : "",
            MeshSchedule.timetable(start, slotMs, rounds.size()),
            local.isEmpty() ? "no source here" : localPairs + " pairs from here (" + String.join(", ", local) + ")");
        if (dryRun) {
            MeshSchedule.print(out, rounds, local, start, slotMs);
            out.flush();
            return 0;
        }
        requireRunnableHere(cl, local, start, rounds.size() * slotMs, sourcesElsewhere);
        Auth auth = secret.load(cl.getErr(), "lossprobe: ");
        int connectTimeoutMs = connectTimeoutMs();
        Path file = resultsFile(local);
        Inputs.requireWritable(cl, file, "results to");
        checkOutputs.requireWritable(cl);

        Map<String, Host> byName = new LinkedHashMap<>();
        hosts.forEach(h -> byName.put(h.name(), h));
        MeshWriter writer = writer(file, hosts, local, MeshSchedule.record(rounds, parallel, start, slotMs), selection,
            out);
        List<MeshResult.Pair> done = new ArrayList<>();
        writer.write(done);
        if (!quiet.quiet) {
            out.printf("%-24s %s%n", "pair", StepTable.header());
            out.flush();
        }
        MeshRunner runner = new MeshRunner(rounds, local, start, slotMs, slackMs, MeshSchedule.estimatePairMs(plan),
            meshClock);
        CountDownLatch finished = new CountDownLatch(1);
        Thread hook = shutdownHook(runner, finished);
        Runtime.getRuntime().addShutdownHook(hook);
        long t0 = System.nanoTime();
        boolean stopped = runRounds(runner, slotEnds -> new MeshPairRun(meshClock, planFor, byName, auth, options,
            available, connectTimeoutMs, out, quiet.quiet, flows, slotEnds, running, drive), done, writer, hook,
            finished);
        writer.write(done);
        return finish(cl, done, t0, file, sourcesElsewhere, stopped);
    }

    /** {@code --connect-timeout} in milliseconds. */
    private int connectTimeoutMs() {
        return (int) Math.min(Integer.MAX_VALUE,
            Units.parseDurationNs(connectTimeout, "--connect-timeout") / 1_000_000);
    }

    /** The options that do not go together, and the inputs, checked before anything else. */
    private void checkOptions(CommandLine cl) {
        family.check(cl);
        if (!policy.given() && checkOutputs.junit != null) {
            throw new CommandLine.ParameterException(cl, "--junit goes with --policy");
        }
        policy.requireReadable(cl); // a bad policy fails before any traffic
        checkOutputs.requireNotInput(cl, java.util.Arrays.asList(policy.policy, hostsFile, secret.secretFile),
            output);
        if (drive && (startAt != null || asSource != null || slot != null)) {
            throw new CommandLine.ParameterException(cl, "--drive runs every pair from here, back to back: it does "
                + "not go with " + (startAt != null ? "--start-at" : asSource != null ? "--as-source" : "--slot"));
        }
    }

    /** {@code --drive}: every source of the mesh's pairs is run from here. */
    private static Set<String> allSources(List<MeshPairs.Link> links) {
        Set<String> all = new LinkedHashSet<>();
        links.forEach(l -> all.add(l.source()));
        return all;
    }

    /**
     * Runs the rounds, each one's pairs written as it ends, with a slot-end thread for {@code pairRun}; the
     * slot-end thread and Ctrl-C's {@code hook} are released however it ends. Returns whether it was interrupted.
     */
    private boolean runRounds(MeshRunner runner,
                              java.util.function.Function<ScheduledExecutorService, MeshPairRun> pairRun,
                              List<MeshResult.Pair> done, MeshWriter writer, Thread hook, CountDownLatch finished)
        throws Exception {
        ScheduledExecutorService slotEnds = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "lossprobe-mesh-slot-end");
            t.setDaemon(true);
            return t;
        });
        try {
            RunEngine.prewarm(); // while the first round is still ahead
            runner.run(pairRun.apply(slotEnds), round -> {
                    done.addAll(round);
                    writer.write(done);
                });
            return interrupted;
        } finally {
            slotEnds.shutdownNow();
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // Already shutting down (Ctrl-C): the hook waits for us.
            }
        }
    }

    /** Refuses a mesh this host cannot run: no source here, a start already over, or sources elsewhere unscheduled. */
    private void requireRunnableHere(CommandLine cl, Set<String> local, Instant start, long meshMs,
                                     Set<String> sourcesElsewhere) {
        if (local.isEmpty()) {
            throw new CommandLine.ParameterException(cl, "none of the hosts is this host, so no pair has its source "
                + "here: run the mesh on a source host, or name the sources to run here with --as-source");
        }
        if (start != null && clock.instant().isAfter(start.plusMillis(meshMs))) {
            throw new CommandLine.ParameterException(cl, "--start-at " + startAt + " is over: a mesh from " + start
                + " ended at " + start.plusMillis(meshMs) + " (a time of day means its nearest "
                + "occurrence; give an instant ahead, e.g. " + clock.instant().plusSeconds(300)
                .truncatedTo(java.time.temporal.ChronoUnit.MINUTES) + ")");
        }
        if (start == null && !sourcesElsewhere.isEmpty()) {
            throw new CommandLine.ParameterException(cl, "pairs from " + String.join(", ", sourcesElsewhere)
                + " must run on those hosts: run 'lossprobe mesh' there too, every one with the same hosts, pairs, "
                + "plan and --start-at (or name them with --as-source to send from here)");
        }
    }

    /** {@code -o}, a file or a directory for the default name (with the one local source's name, if one). */
    private Path resultsFile(Set<String> local) {
        String defaultName = "lossprobe-mesh-" + (local.size() == 1
            ? local.iterator().next().replaceAll("[^A-Za-z0-9_.-]", "_") + "-" : "")
            + LocalDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + ".json";
        return output == null ? Path.of(defaultName)
            : java.nio.file.Files.isDirectory(output) ? output.resolve(defaultName) : output;
    }

    /** The results file's writer: the hosts, the sources here, the schedule, the selection, and when it started. */
    private MeshWriter writer(Path file, List<Host> hosts, Set<String> local, MeshResult.Schedule schedule,
                              String selection, PrintWriter out) {
        String startedAt = clock.instant().toString();
        List<String> sources = hosts.stream().map(Host::name).filter(local::contains).toList();
        return new MeshWriter(file, hosts, sources, schedule, selection, startedAt, out);
    }

    /** Ctrl-C: stops the runner and every running pair, and waits (bounded) for the mesh to finish writing. */
    private Thread shutdownHook(MeshRunner runner, CountDownLatch finished) {
        return new Thread(() -> {
            interrupted = true;
            runner.requestStop();
            running.forEach(RunEngine::requestStop);
            try {
                finished.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "lossprobe-mesh-shutdown");
    }

    /** Says how the mesh went, then checks or exports its results; returns the exit status. */
    private int finish(CommandLine cl, List<MeshResult.Pair> done, long t0, Path file, Set<String> sourcesElsewhere,
                       boolean stopped) throws Exception {
        PrintWriter out = cl.getOut();
        Map<String, Long> byStatus = new LinkedHashMap<>();
        done.forEach(p -> byStatus.merge(p.status(), 1L, Long::sum));
        out.printf("mesh: %d pair(s) from here in %s: %s; results written to %s%n", done.size(),
            MeshSchedule.minutes((System.nanoTime() - t0) / 1_000_000), byStatus.entrySet().stream()
                .map(e -> e.getValue() + " " + e.getKey()).reduce((a, b) -> a + ", " + b).orElse("none"), file);
        if (!sourcesElsewhere.isEmpty()) {
            out.println("pairs from " + String.join(", ", sourcesElsewhere) + " run on those hosts: join their files "
                + "with 'lossprobe mesh merge'");
        }
        out.flush();
        if (stopped) {
            cl.getErr().println("lossprobe: mesh interrupted; the finished pairs are in " + file);
            return 130;
        }
        if (policy.given()) {
            return policy.check(cl, file, checkOutputs, List.of());
        }
        if (checkOutputs.prometheus != null) {
            io.lossprobe.analysis.MeshPrometheus.write(checkOutputs.prometheus, MeshFiles.read(file),
                checkOutputs.name, java.util.Optional.empty());
        }
        return 0;
    }

    private List<Host> hosts() {
        List<Host> all = new ArrayList<>();
        if (hostsFile != null) {
            all.addAll(MeshHosts.read(hostsFile));
        }
        for (String h : hostFlags) {
            all.add(MeshHosts.parse(h));
        }
        if (hostsDns != null) {
            all.addAll(MeshHosts.resolve(hostsDns, family));
        }
        return MeshHosts.inFamily(all, family);
    }

    /** The sources this process runs: --as-source, or the hosts whose address this host can bind. */
    private Set<String> localSources(List<Host> hosts) {
        Set<String> local = new LinkedHashSet<>();
        if (asSource != null && !(asSource.size() == 1 && asSource.get(0).equals("auto"))) {
            for (String s : asSource) {
                Host h = hosts.stream().filter(x -> x.name().equals(s.strip()) || x.address().equals(s.strip()))
                    .findFirst().orElseThrow(() -> new IllegalArgumentException("--as-source: '" + s
                        + "' is not one of the hosts"));
                local.add(h.name());
            }
            return local;
        }
        for (Host h : hosts) {
            if (isThisHost(h.address())) {
                local.add(h.name());
            }
        }
        return local;
    }

    /** True when a socket can be bound to the address here: it is one of this host's (or loopback). */
    static boolean isThisHost(String address) {
        try {
            for (InetAddress a : InetAddress.getAllByName(address)) {
                try (DatagramSocket s = new DatagramSocket(new InetSocketAddress(a, 0))) {
                    return true;
                } catch (IOException e) {
                    // Not here; try the next address.
                }
            }
        } catch (IOException e) {
            // Does not resolve: not this host.
        }
        return false;
    }
}
