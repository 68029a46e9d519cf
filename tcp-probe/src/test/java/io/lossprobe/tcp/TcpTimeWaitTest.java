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
        for (int port : senderPorts) {
            try (ServerSocket listener = new ServerSocket()) {
                listener.setReuseAddress(true); // as TcpReceiver's listeners do
                listener.bind(new InetSocketAddress(TcpRuns.LOOPBACK, port));
            }
        }
    }

    /** Local ports of sockets in TIME_WAIT (state 06) whose remote port is in [from, to]. */
    private static List<Integer> timeWaitLocalPortsTowards(int from, int to) throws Exception {
        List<Integer> ports = new ArrayList<>();
        List<String> lines = new ArrayList<>(Files.readAllLines(Path.of("/proc/net/tcp")));
        lines.addAll(Files.readAllLines(Path.of("/proc/net/tcp6"))); // Java's sockets are dual-stack
        for (String line : lines) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 4 || !f[3].equals("06")) {
                continue;
            }
            int local = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1), 16);
            int remote = Integer.parseInt(f[2].substring(f[2].indexOf(':') + 1), 16);
            if (remote >= from && remote <= to) {
                ports.add(local);
            }
        }
        return ports;
    }
}
