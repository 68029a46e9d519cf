package io.lossprobe.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.EchoReplies;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.TransportReport;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * TCP's responder counts what became of its replies in echo mode's shared vocabulary: a requester that stops
 * reading and then dies (a reset) leaves replies the responder could not write, and those are
 * {@code echo.repliesDropped} (reply loss at the responder); every reply the kernel took is
 * {@code echo.repliesSent}, so the two add up to the requests counted.
 */
@Tag("system")
class TcpEchoReplyLossTest {
    private static final int RUN = 4343;
    private static final int PORT = 42980;
    private static final int SIZE = 1024;
    /** Bound on the requests sent: the responder stops reading long before (its buffers hold a few MiB). */
    private static final int MAX_REQUESTS = 100_000;
    private static final MessageAuth KEY = MessageAuth.random();

    private static ByteBuffer request(long seq) {
        long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, 0);
        long w1 = MessageHeader.word1(RUN, 0, SIZE);
        long t = System.nanoTime();
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        b.putLong(w0).putLong(w1).putLong(seq).putLong(t).putLong(t).putLong(KEY.tag(w0, w1, seq, t, t));
        return b.clear();
    }

    @Test
    @Timeout(60)
    void repliesThatCannotBeWrittenAreCountedAsDropped() throws Exception {
        Plan plan = new Plan(List.of("tcp"), 1, PORT, List.of(Level.parse("1k")), 1_000_000_000L, 0, 1_000_000_000L,
            SIZE, "127.0.0.1", Plan.ECHO, 0);
        FlowReceiver flow = new FlowReceiver(0, RUN, SIZE, 1, false, KEY);
        try (TcpReceiver rx = (TcpReceiver) new TcpTransport().openReceiver(
                new ReceiverSpec(plan, "127.0.0.1", new FlowReceiver[] {flow}, Map.of(), null, null))) {
            rx.beginStep(0);
            rx.onFlowThreads(i -> flow.beginStep(0, 4096));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            try (SocketChannel requester = SocketChannel.open()) {
                requester.setOption(StandardSocketOptions.SO_RCVBUF, 4096); // it never reads: replies back up soon
                requester.connect(new InetSocketAddress("127.0.0.1", PORT));
                requester.configureBlocking(false);
                // connect() returns once the kernel completed the handshake; the responder's event loop accepts
                // the connection a moment later, and until then there is no connection that reads (seen 1 in 30).
                while (rx.connections(0) == 0) {
                    assertThat(System.nanoTime()).as("the responder accepts the connection").isLessThan(deadline);
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
                // Requests until the responder stops reading: its replies no longer fit the connection's buffers.
                long seq = 0;
                ByteBuffer pending = request(seq);
                while (rx.reading(0)) {
                    assertThat(System.nanoTime()).as("the responder stops reading").isLessThan(deadline);
                    assertThat(seq).as("requests sent").isLessThan(MAX_REQUESTS);
                    if (requester.write(pending) == 0) {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                    } else if (!pending.hasRemaining()) {
                        pending = request(++seq);
                    }
                }
                requester.setOption(StandardSocketOptions.SO_LINGER, 0); // the requester dies: a reset
            }
            TransportReport report;
            long counted;
            do {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                report = rx.endStep(); // the replies' counts since the step began; rereading is harmless here
                counted = flow.progress();
                long now = System.nanoTime();
                assertThat(now).as("every counted request's reply settled: %d counted, %s, reading %s, %d connections,"
                    + " %d ms left", counted, report.counters(), rx.reading(0), rx.connections(0),
                    (deadline - now) / 1_000_000).isLessThan(deadline);
            } while (report.counters().get(EchoReplies.SENT) + report.counters().get(EchoReplies.DROPPED) != counted
                || rx.reading(0) || counted == 0);

            Map<String, Long> c = report.counters();
            System.out.println("tcp echo, requester gone: " + counted + " requests counted, " + c);
            assertThat(c.get(EchoReplies.DROPPED)).as("replies the responder could not write").isPositive();
            assertThat(c.get(EchoReplies.SENT)).as("replies the kernel took").isPositive();
            assertThat(report.flow(0)).containsEntry(EchoReplies.SENT, c.get(EchoReplies.SENT))
                .containsEntry(EchoReplies.DROPPED, c.get(EchoReplies.DROPPED));
        }
    }
}
