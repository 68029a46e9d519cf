package io.lossprobe.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sender's connections end in TIME_WAIT on their ephemeral local ports. Those ports may be the next run's
 * data ports (lossprobe's default ports lie in Linux's ephemeral range): a listener can take a port from a
 * TIME_WAIT socket only when both set SO_REUSEADDR, so the sender's sockets set it. Seen in CI before: a later
 * test's receiver could not listen on a port an earlier test's sender had connected from.
 */
@Tag("system")
class TcpTimeWaitTest {
    private static final int BASE_PORT = 41300;
    private static final int PORTS = 4;

    @Test
    @Timeout(60)
    void aPortTheSenderConnectedFromCanBeListenedOnRightAfterTheRun() throws Exception {
        Plan plan = TcpRuns.plan(PORTS, BASE_PORT, List.of(Level.of(1_000)), 200, 500, 64);
        TcpRuns.run(plan, Map.of(), StepHooks.NONE, new RunListener() { });

        List<Integer> senderPorts = timeWaitLocalPortsTowards(BASE_PORT, BASE_PORT + PORTS - 1);
        assertThat(senderPorts).as("the sender's connections, closed first, wait in TIME_WAIT").isNotEmpty();
        int listened = 0;
        for (int port : senderPorts) {
            try (ServerSocket listener = new ServerSocket()) {
                listener.setReuseAddress(true); // as TcpReceiver's listeners do
                listener.bind(new InetSocketAddress(TcpRuns.LOOPBACK, port));
                listened++;
            } catch (java.net.BindException e) {
                // Linux shares a connect()ed port across destinations: another program's connection (live, or
                // in TIME_WAIT without SO_REUSEADDR) may hold the same port, and then the port proves nothing.
                // Held only by this run's connections in TIME_WAIT, it is the failure this test is about.
                List<String> holders = holdersOf(port);
                assertThat(holders.stream().allMatch(h -> h.startsWith("06 ") && towards(h, BASE_PORT, PORTS)))
                    .as("port %d held only by this run's TIME_WAIT sockets: %s", port, holders).isFalse();
            }
        }
        // On a busy host every port may be shared with other programs' connections: then nothing was shown.
        org.junit.jupiter.api.Assumptions.assumeTrue(listened > 0,
            "every port the sender used is shared with other programs' connections: " + senderPorts);
    }

    /** "STATE REMOTEPORT" (state in hex as in /proc/net/tcp: 06 = TIME_WAIT) of every socket on local port
     * {@code port}. */
    private static List<String> holdersOf(int port) throws Exception {
        List<String> holders = new ArrayList<>();
        for (String[] f : sockets()) {
            if (port(f[1]) == port) {
                holders.add(f[3] + " " + port(f[2]));
            }
        }
        return holders;
    }

    private static boolean towards(String holder, int basePort, int ports) {
        int remote = Integer.parseInt(holder.substring(holder.indexOf(' ') + 1));
        return remote >= basePort && remote < basePort + ports;
    }

    private static List<String[]> sockets() throws Exception {
        List<String> lines = new ArrayList<>(Files.readAllLines(Path.of("/proc/net/tcp")));
        lines.addAll(Files.readAllLines(Path.of("/proc/net/tcp6"))); // Java's sockets are dual-stack
        List<String[]> rows = new ArrayList<>();
        for (String line : lines) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 4 && f[1].contains(":")) {
                rows.add(f);
            }
        }
        return rows;
    }

    private static int port(String address) {
        return Integer.parseInt(address.substring(address.indexOf(':') + 1), 16);
    }

    /** Local ports of sockets in TIME_WAIT (state 06) whose remote port is in [from, to]. */
    private static List<Integer> timeWaitLocalPortsTowards(int from, int to) throws Exception {
        List<Integer> ports = new ArrayList<>();
        for (String[] f : sockets()) {
            int remote = port(f[2]);
            if (f[3].equals("06") && remote >= from && remote <= to) {
                ports.add(port(f[1]));
            }
        }
        return ports;
    }
}
