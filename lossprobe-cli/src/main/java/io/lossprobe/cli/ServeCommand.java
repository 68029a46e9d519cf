package io.lossprobe.cli;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlClient;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Units;
import io.lossprobe.core.transport.Transports;
import java.io.PrintWriter;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code lossprobe serve}: the receiving host of a two-host run. */
@Command(name = "serve",
    description = {"Receives for authenticated controllers ('lossprobe run --target THIS-HOST'): binds each "
        + "controller's data ports, counts what arrives, and returns per-flow results with this host's counters.",
        "It sends data traffic only for a --reverse controller, and only to that controller's own address, or for "
            + "'run --from THIS-HOST --target B' to the serve B once B has proved the secret to it. Runs until "
            + "Ctrl-C. Make the shared secret with 'lossprobe keygen FILE'."},
    footer = {"", "Exit codes: 0 stopped, 1 runtime failure, 2 bad usage.", "",
        "Example: lossprobe serve --bind 10.0.0.5 --secret-file /etc/lossprobe/secret --max-rate 1M"})
public final class ServeCommand extends Subcommand {
    @Option(names = "--bind", defaultValue = "0.0.0.0", paramLabel = "ADDR",
        description = "Address for the control port and the data receivers. Default: ${DEFAULT-VALUE} (every IPv4 "
            + "address; :: with -6, every IPv6 address).")
    String bind;

    @CommandLine.Mixin
    AddressFamilyOption family;

    @Option(names = "--port", defaultValue = "" + ControlClient.DEFAULT_PORT, paramLabel = "PORT",
        description = "Control port. Default: ${DEFAULT-VALUE}.")
    int port;

    @CommandLine.Mixin
    SecretOption secret;

    @Option(names = "--max-rate", defaultValue = ServerLimits.DEFAULT_RATE, paramLabel = "RATE",
        description = "Highest level a controller may ask for. Default: ${DEFAULT-VALUE}.")
    String maxRate;

    @Option(names = "--max-ports", defaultValue = "" + ServerLimits.DEFAULT_PORTS, paramLabel = "N",
            description = "Most flows per session. Default: ${DEFAULT-VALUE}.")
    int maxPorts;

    @Option(names = "--max-duration", defaultValue = ServerLimits.DEFAULT_DURATION, paramLabel = "TIME",
            description = "Longest step. Default: ${DEFAULT-VALUE}.")
    String maxDuration;

    @Option(names = "--max-sessions", defaultValue = "" + ServerLimits.DEFAULT_SESSIONS, paramLabel = "N",
            description = "Concurrent controllers. Default: ${DEFAULT-VALUE}.")
    int maxSessions;

    @Option(names = "--max-levels", defaultValue = "" + ServerLimits.DEFAULT_LEVELS, paramLabel = "N",
            description = "Most levels in a plan. Default: ${DEFAULT-VALUE}.")
    int maxLevels;

    @Option(names = "--max-total-duration", defaultValue = ServerLimits.DEFAULT_TOTAL_DURATION, paramLabel = "TIME",
        description = "Longest run: transports x levels x (warm-up + duration + drain). Default: ${DEFAULT-VALUE}.")
    String maxTotalDuration;

    @Option(names = "--max-bytes-rate", defaultValue = ServerLimits.DEFAULT_BYTES_PER_SECOND, paramLabel = "BYTES",
        description = "Highest level times the message size, per second. Default: ${DEFAULT-VALUE}.")
    String maxBytesRate;

    @Option(names = "--max-memory", defaultValue = ServerLimits.DEFAULT_MEMORY, paramLabel = "BYTES",
        description = "Memory one session may make this host allocate (sequence windows, Aeron term buffers). "
            + "Default: ${DEFAULT-VALUE}.")
    String maxMemory;

    @Option(names = "--max-unauthenticated", defaultValue = "" + ServerLimits.DEFAULT_PRE_AUTH_TOTAL, paramLabel = "N",
        description = "Connections held before they authenticate; a further one closes the oldest. "
            + "Default: ${DEFAULT-VALUE}.")
    int maxUnauthenticated;

    @Option(names = "--max-unauthenticated-per-address", defaultValue = "" + ServerLimits.DEFAULT_PRE_AUTH_PER_ADDRESS,
            paramLabel = "N",
        description = "The same, from one address. Default: ${DEFAULT-VALUE}.")
    int maxUnauthenticatedPerAddress;

    @Override
    int run(CommandLine cl) throws Exception {
        if (port < 1 || port > 65535) {
            throw new CommandLine.ParameterException(cl, "--port must be between 1 and 65535");
        }
        if (maxPorts < 1 || maxSessions < 1 || maxLevels < 1 || maxUnauthenticated < 1
            || maxUnauthenticatedPerAddress < 1) {
            throw new CommandLine.ParameterException(cl,
                "--max-ports, --max-sessions, --max-levels and --max-unauthenticated* must be at least 1");
        }
        family.check(cl);
        if (!cl.getParseResult().hasMatchedOption("--bind")) {
            bind = family.wildcard();
        } else if (family.given()) {
            bind = family.resolve(bind, "--bind");
        }
        PrintWriter out = cl.getOut();
        PrintWriter err = cl.getErr();
        Auth auth = secret.load(err, "lossprobe serve: ");
        ServerLimits limits = limits();
        CountDownLatch stop = new CountDownLatch(1);
        try (ControlServer server = listen(auth, limits, out)) {
            Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown, "lossprobe-serve-stop"));
            out.printf("lossprobe serve: listening on %s (transports %s; limits: %s msg/s, %s bytes/s, %d ports, "
                    + "%d levels, %s per step, %s per run, %s memory, %d sessions)%n",
                HostPort.format(bind, server.port()), String.join(",", Transports.available().keySet()), maxRate,
                maxBytesRate, maxPorts, maxLevels, maxDuration, maxTotalDuration, maxMemory, maxSessions);
            out.flush();
            stop.await();
        }
        return 0;
    }

    /** ServerLimits.DEFAULTS with what the --max-* options set (the rest, such as timeouts, are not options). */
    ServerLimits limits() {
        return ServerLimits.DEFAULTS.withSessions(maxSessions).withPreAuth(maxUnauthenticatedPerAddress,
            maxUnauthenticated).withPlanLimits(Level.parse(maxRate).ratePerSecond(), maxPorts,
            Units.parseDurationNs(maxDuration, "--max-duration"), maxLevels,
            Units.parseDurationNs(maxTotalDuration, "--max-total-duration"),
            Units.parseBytes(maxBytesRate, "--max-bytes-rate"), Units.parseBytes(maxMemory, "--max-memory"));
    }

    /** The control server on {@code bind:port}; a port in use names the address (and the likely culprit). */
    private ControlServer listen(Auth auth, ServerLimits limits, PrintWriter out) throws java.io.IOException {
        try {
            return new ControlServer(bind, port, auth, limits, Transports::available, out);
        } catch (java.net.BindException e) {
            String why = e.getMessage() == null ? "" : e.getMessage().toLowerCase(java.util.Locale.ROOT);
            throw new java.io.IOException("cannot listen on " + HostPort.format(bind, port) + ": "
                + (why.contains("in use") ? "the address is already in use (another lossprobe serve?)"
                    : why.contains("assign") ? "no interface of this host has that address"
                    : e.getMessage()), e);
        }
    }
}
