package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.control.ServerLimits;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code serve}'s --max-* options and control's ServerLimits declare the same limits once. */
class ServeLimitsTest {
    private static ServeCommand parse(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "serve";
        System.arraycopy(args, 0, all, 1, args.length);
        return (ServeCommand) LossprobeCommand.commandLine().parseArgs(all).subcommand().commandSpec().userObject();
    }

    @Test
    void serveWithNoOptionsBuildsTheServersDefaults() {
        assertThat(parse().limits()).isEqualTo(ServerLimits.DEFAULTS);
    }

    @Test
    void theDefaultsAreTheFiguresTheHelpPromises() {
        ServerLimits d = ServerLimits.DEFAULTS;
        assertThat(d.maxRatePerSecond()).isEqualTo(2_000_000);
        assertThat(d.maxDurationNs()).isEqualTo(TimeUnit.MINUTES.toNanos(5));
        assertThat(d.maxTotalDurationNs()).isEqualTo(TimeUnit.HOURS.toNanos(1));
        assertThat(d.maxBytesPerSecond()).isEqualTo(256L << 20);
        assertThat(d.maxMemoryBytes()).isEqualTo(1L << 30);
        assertThat(d.minPort()).isEqualTo(1024);
    }

    @Test
    void eachOptionSetsItsOwnLimitAndNoOther() {
        ServerLimits l = parse("--max-rate", "30k", "--max-ports", "8", "--max-duration", "10s", "--max-sessions", "2",
            "--max-levels", "5", "--max-total-duration", "2m", "--max-bytes-rate", "1MiB", "--max-memory", "64MiB",
            "--max-unauthenticated", "7", "--max-unauthenticated-per-address", "3").limits();
        ServerLimits d = ServerLimits.DEFAULTS;
        assertThat(l).isEqualTo(new ServerLimits(30_000, 8, TimeUnit.SECONDS.toNanos(10), 2, d.minPort(),
            d.handshakeTimeoutMs(), d.idleTimeoutMs(), 5, TimeUnit.MINUTES.toNanos(2), 1L << 20, 64L << 20, 3, 7,
            d.writeTimeoutMs()));
    }
}
