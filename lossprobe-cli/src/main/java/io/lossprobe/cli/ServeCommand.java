package io.lossprobe.cli;

import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlClient;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Units;
import io.lossprobe.core.transport.Transports;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code lossprobe serve}: the receiving host of a two-host run. */
@Command(name = "serve", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Receives for authenticated controllers ('lossprobe run --target THIS-HOST'): binds each "
        + "controller's data ports, counts what arrives, and returns per-flow results with this host's counters.",
        "Only receives: it never sends data traffic. Runs until Ctrl-C."},
    footer = {"", "Exit codes: 0 stopped, 1 runtime failure, 2 bad usage."})
public final class ServeCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--bind", defaultValue = "0.0.0.0", paramLabel = "ADDR",
        description = "Address for the control port and the data receivers. Default: ${DEFAULT-VALUE}.")
    String bind;

    @Option(names = "--port", defaultValue = "" + ControlClient.DEFAULT_PORT, paramLabel = "PORT",
        description = "Control port. Default: ${DEFAULT-VALUE}.")
    int port;

    @Option(names = "--secret-file", paramLabel = "FILE",
        description = "Shared secret (else $" + Auth.SECRET_ENV + "); required.")
    Path secretFile;

    @Option(names = "--max-rate", defaultValue = "2M", paramLabel = "RATE",
        description = "Highest level a controller may ask for. Default: ${DEFAULT-VALUE}.")
    String maxRate;

    @Option(names = "--max-ports", defaultValue = "256", paramLabel = "N", description = "Most flows per session. Default: ${DEFAULT-VALUE}.")
    int maxPorts;

    @Option(names = "--max-duration", defaultValue = "5m", paramLabel = "TIME", description = "Longest step. Default: ${DEFAULT-VALUE}.")
    String maxDuration;

    @Option(names = "--max-sessions", defaultValue = "4", paramLabel = "N", description = "Concurrent controllers. Default: ${DEFAULT-VALUE}.")
    int maxSessions;

    @Override
    public Integer call() throws Exception {
        if (port < 1 || port > 65535) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--port must be between 1 and 65535");
        }
        if (maxPorts < 1 || maxSessions < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--max-ports and --max-sessions must be at least 1");
        }
        Auth auth = Auth.load(secretFile);
        ServerLimits limits = new ServerLimits(Level.parse(maxRate).ratePerSecond(), maxPorts,
            Units.parseDurationNs(maxDuration, "--max-duration"), maxSessions, 1024,
            ServerLimits.DEFAULTS.handshakeTimeoutMs(), ServerLimits.DEFAULTS.idleTimeoutMs());
        PrintWriter out = spec.commandLine().getOut();
        CountDownLatch stop = new CountDownLatch(1);
        try (ControlServer server = new ControlServer(bind, port, auth, limits, Transports.available(), out)) {
            Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown, "lossprobe-serve-stop"));
            out.printf("lossprobe serve: listening on %s:%d (transports %s; limits: %s msg/s, %d ports, %s, %d sessions)%n",
                bind, server.port(), String.join(",", Transports.available().keySet()), maxRate, maxPorts,
                maxDuration, maxSessions);
            out.flush();
            stop.await();
        }
        return 0;
    }
}
