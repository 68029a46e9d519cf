package io.lossprobe.tcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.Closing;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageAuth;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the TCP endpoints' event loops do when something goes wrong on them: a connection's I/O error is counted
 * and said in the step's notes; a listener out of file descriptors backs off and keeps serving; closing after the
 * loop died returns within a bound.
 */
@Tag("system")
class TcpLoopFailureTest {
    private static final String LOOPBACK = "127.0.0.1";

    private static Plan plan(int basePort) {
        return new Plan(List.of("tcp"), 1, basePort, List.of(Level.parse("1k")), TimeUnit.MILLISECONDS.toNanos(100),
            0, TimeUnit.MILLISECONDS.toNanos(100), 64, LOOPBACK);
    }

    private static TcpReceiver receiver(int basePort) throws Exception {
        FlowReceiver[] flows = {new FlowReceiver(0, 1, 64, 1, false, MessageAuth.random())};
        return TcpReceiver.open(new ReceiverSpec(plan(basePort), LOOPBACK, flows, Map.of()),
            TcpSettings.from(Map.of()));
    }

    @Test
    @Timeout(30)
    void aConnectionResetIsCountedAndSaidInTheStepsNotes() throws Exception {
        int port = 42960;
        TcpReceiver receiver = receiver(port);
        try {
            receiver.beginStep(0);
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(LOOPBACK, port), 5_000);
                awaitConnections(receiver, 1);
                s.setSoLinger(true, 0); // close with a reset
            }
            List<String> notes = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (notes.isEmpty() && System.nanoTime() < deadline) {
                notes.addAll(receiver.endStep().notes());
            }
            assertThat(notes).singleElement().asString()
                .startsWith("tcp flow 0 (port " + port + "): 1 connection error(s), the last: ")
                .containsIgnoringCase("reset");
            assertThat(receiver.endStep().notes()).as("counted once, in one step").isEmpty();
        } finally {
            receiver.close();
        }
    }

    /**
     * Real EMFILE: this JVM's descriptor limit is lowered and the rest filled, then a connection arrives (from a
     * shell started beforehand, which needs no new descriptor here to be told to connect). Each failed accept
     * pauses the listener (10 ms, 20 ms, 40 ms, ...): four failures take at least 70 ms, where a listener that
     * spun on its level-triggered readiness would fail thousands of times in that span. With descriptors back the
     * waiting connection is accepted.
     */
    @Test
    @Timeout(60)
    void aListenerOutOfFileDescriptorsBacksOffAndServesAgainOnceTheyAreBack() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/prlimit")), "needs prlimit (util-linux)");
        int port = 42965;
        TcpReceiver receiver = receiver(port);
        Process client = new ProcessBuilder("timeout", "60", "bash", "-c",
            "read go; exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected; read done").start();
        long pid = ProcessHandle.current().pid();
        String[] limits = Files.readAllLines(Path.of("/proc/self/limits")).stream()
            .filter(l -> l.startsWith("Max open files")).findFirst().orElseThrow().split("\\s+");
        String soft = limits[3];
        String hard = limits[4];
        List<FileChannel> filler = new ArrayList<>();
        long[] errorsAt = new long[2];
        long[] nanosAt = new long[2];
        boolean connected;
        try (OutputStream toClient = client.getOutputStream();
             BufferedReader fromClient = new BufferedReader(new InputStreamReader(client.getInputStream(),
                 StandardCharsets.US_ASCII))) {
            receiver.beginStep(0);
            Closing.deadline(); // loaded now: nothing may need a descriptor while there are none
            long open;
            try (var fds = Files.list(Path.of("/proc/self/fd"))) {
                open = fds.count();
            }
            run("prlimit", "--pid", Long.toString(pid), "--nofile=" + (open + 32) + ":" + hard);
            try {
                takeEveryFreeDescriptor(filler);
                toClient.write("go\n".getBytes(StandardCharsets.US_ASCII));
                toClient.flush();
                connected = "connected".equals(fromClient.readLine());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (receiver.acceptErrors().sinceStepStart() < 1 && System.nanoTime() < deadline) {
                    // Earlier tests' connections may still be closing on other threads: take what they free.
                    takeEveryFreeDescriptor(filler);
                }
                errorsAt[0] = receiver.acceptErrors().sinceStepStart();
                nanosAt[0] = System.nanoTime();
                while (receiver.acceptErrors().sinceStepStart() < errorsAt[0] + 3 && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                errorsAt[1] = receiver.acceptErrors().sinceStepStart();
                nanosAt[1] = System.nanoTime();
            } finally {
                for (FileChannel c : filler) {
                    c.close();
                }
                run("prlimit", "--pid", Long.toString(pid), "--nofile=" + soft + ":" + hard);
            }
            assertThat(connected).as("the client's connection completed in the kernel's backlog").isTrue();
            assertThat(errorsAt[0]).as("the accept failed for want of a descriptor").isPositive();
            assertThat(errorsAt[1]).as("and failed again as the pauses ended").isGreaterThanOrEqualTo(errorsAt[0] + 3);
            assertThat(nanosAt[1] - nanosAt[0]).as("three more failures took the pauses between them")
                .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(10 + 20 + 40)
                        - TimeUnit.MILLISECONDS.toNanos(10));

            awaitConnections(receiver, 1);
            TransportReport report = receiver.endStep();
            assertThat(report.counters().get(TcpCounter.ACCEPT_ERRORS.key)).isGreaterThanOrEqualTo(errorsAt[1]);
            assertThat(report.notes()).anySatisfy(n -> assertThat(n)
                .startsWith("tcp flow 0 (port " + port + "): ").contains(" accept error(s), the last: ")
                .containsIgnoringCase("too many open files"));
            toClient.write("done\n".getBytes(StandardCharsets.US_ASCII));
        } finally {
            client.destroyForcibly();
            receiver.close();
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // the old close hung, deaf to interrupts
    void closingAfterTheLoopHungReturnsWithinTheBound() throws Exception {
        int port = 42970;
        TcpReceiver receiver = receiver(port);
        TcpSender sender = TcpSender.open(new SenderSpec(plan(port), LOOPBACK, 1, Map.of(), MessageAuth.random()),
            TcpSettings.from(Map.of()));
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch stuck = new CountDownLatch(2);
        Runnable hang = () -> {
            stuck.countDown();
            try {
                release.await(); // a handler that never returns: the loop is dead to everyone else
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        try {
            sender.sendExecutor().execute(hang);
            receiver.loop().execute(hang);
            assertThat(stuck.await(10, TimeUnit.SECONDS)).isTrue();
            long t0 = System.nanoTime();
            sender.close();
            receiver.close();
            assertThat(System.nanoTime() - t0).isLessThan(2 * Closing.TIMEOUT_NS + TimeUnit.SECONDS.toNanos(2));
        } finally {
            release.countDown();
        }
    }

    private static void awaitConnections(TcpReceiver receiver, int n) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (receiver.connections(0) != n) {
            assertThat(System.nanoTime()).as("%d connection(s) within 10 s", n).isLessThan(deadline);
            Thread.onSpinWait();
        }
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String output = new String(p.getInputStream().readAllBytes());
        // The pipes closed here, on this thread: the JDK's reaper would close them after waitFor returns, which can
        // free two descriptors after the test has taken every free one.
        p.getInputStream().close();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
    }

    /** Opens /dev/null until the process is out of descriptors: what the accept will meet. */
    private static void takeEveryFreeDescriptor(List<FileChannel> filler) {
        try {
            while (true) {
                filler.add(FileChannel.open(Path.of("/dev/null"), StandardOpenOption.READ));
            }
        } catch (IOException e) {
            // out of descriptors
        }
    }
}
