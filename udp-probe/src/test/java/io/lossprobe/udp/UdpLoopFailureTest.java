package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.Closing;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.TransportReport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the UDP endpoints' event loops do when something goes wrong on them: an exception caught by a handler is
 * counted per step and said in a note, never swallowed; closing after the loop died returns within a bound.
 */
class UdpLoopFailureTest {
    /** Nothing listens here: every datagram sent to it comes back as an ICMP port unreachable. */
    private static final int CLOSED_PORT = 41975;

    private static UdpSender open(String ioMode) throws Exception {
        Plan plan = new Plan(List.of("udp"), 1, CLOSED_PORT, List.of(Level.parse("1k")),
            TimeUnit.MILLISECONDS.toNanos(100), 0, TimeUnit.MILLISECONDS.toNanos(100), 64, "127.0.0.1");
        // Without IP_RECVERR the port unreachable becomes the connected socket's pending error (ECONNREFUSED),
        // which the next read raises through the pipeline to the writer's exceptionCaught: the Netty send path's
        // sockets (the native path's one unconnected socket takes no ICMP error without IP_RECVERR).
        return UdpSender.open(new SenderSpec(plan, "127.0.0.1", 7, Map.of("udp.recverr", "off", "udp.io", ioMode,
            "udp.send", "netty"), io.lossprobe.core.wire.MessageAuth.random()));
    }

    @Test
    @Timeout(30)
    void aSocketErrorOnTheSendersLoopIsCountedAndSaidInTheStepsNotes() throws Exception {
        UdpSender sender = open("auto");
        try {
            sender.beginStep(0);
            MessageWriter w = sender.writer(0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            TransportReport report = sender.endStep();
            while (report.notes().isEmpty() && System.nanoTime() < deadline) {
                sender.onReplyThread(() -> {
                    w.write(0, io.lossprobe.core.wire.MessageHeader.word1(0, 0, 64), 0, 0, 0, 0);
                    w.flush();
                });
                report = sender.endStep();
            }
            assertThat(report.notes()).singleElement().asString()
                .startsWith("udp flow 0 (port " + CLOSED_PORT + "): ")
                .containsPattern("\\d+ sender socket error\\(s\\), the last: .*(refused|unreachable)");
            assertThat(report.counters().get("udp.senderSocketErrors")).isPositive();

            sender.beginStep(1); // a new step starts from zero
            assertThat(sender.endStep().notes()).isEmpty();
        } finally {
            sender.close();
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // the old close hung, deaf to interrupts
    void closingAfterTheLoopHungReturnsWithinTheBound() throws Exception {
        UdpSender sender = open("auto");
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch stuck = new CountDownLatch(1);
        try {
            sender.loop().execute(() -> {
                stuck.countDown();
                try {
                    release.await(); // a handler that never returns: the loop is dead to everyone else
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(stuck.await(10, TimeUnit.SECONDS)).isTrue();
            long t0 = System.nanoTime();
            sender.close();
            long tookNs = System.nanoTime() - t0;
            assertThat(tookNs).isLessThan(Closing.TIMEOUT_NS + TimeUnit.SECONDS.toNanos(2));
        } finally {
            release.countDown();
        }
    }

    @Test
    @Timeout(30)
    void closingAfterTheLoopWasShutDownNeitherHangsNorThrows() throws Exception {
        UdpSender sender = open("nio");
        sender.loop().shutdownGracefully(0, 0, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
        long t0 = System.nanoTime();
        sender.close();
        assertThat(System.nanoTime() - t0).isLessThan(Closing.TIMEOUT_NS);
        sender.close(); // and again
    }
}
