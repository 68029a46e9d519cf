package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** nftables from the loopback system tests: rules as ground truth, each command bounded in time. */
final class Nft {
    private Nft() {
    }

    /** Runs {@code nft COMMAND} (words split on spaces); unless {@code mayFail}, it must succeed. */
    static void nft(String command, boolean mayFail) {
        List<String> cmd = new ArrayList<>(List.of("nft"));
        cmd.addAll(List.of(command.split(" ")));
        int rc = run(cmd.toArray(String[]::new));
        if (!mayFail) {
            assertThat(rc).as("nft " + command).isZero();
        }
    }

    /** {@code nft list table ip TABLE}, as text. */
    static String listing(String table) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("nft", "list", "table", "ip", table).redirectErrorStream(true).start();
        String listing = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return listing;
    }

    /** A command's exit code, -1 when it could not run or took over 10 s. */
    static int run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
            return p.waitFor(10, TimeUnit.SECONDS) ? p.exitValue() : -1;
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
