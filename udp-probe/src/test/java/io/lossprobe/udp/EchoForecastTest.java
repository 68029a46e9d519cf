package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An echo responder in the default timing forecasts its next request from the requests it answered
 * ({@link ArrivalForecast}), and from nothing else: a stranger sending on the same schedule, or the flow's own
 * datagrams with a tag that fails, move no forecast, so nobody off the path can make the responder's thread look
 * for datagrams. Real sockets on loopback, port 41990; requests 2 ms apart, paced by this test.
 */
@Tag("system")
class EchoForecastTest {
    private static final int RUN = 4343;
    private static final int PORT = 41990;
    private static final int REQUESTS = 40;
    private static final long GAP_NS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final MessageAuth KEY = MessageAuth.random();

    @Test
    @Timeout(60)
    void onlyAnsweredRequestsAreForecast() throws Exception {
        assumeTrue(NativeUdp.available(), "the forecast is the native reader's");
        // the flow's sender, on schedule: a forecast after every request but the first
        Outcome answered = exchange(Map.of(), "127.0.0.1", KEY);
        assertThat(answered.counted).isEqualTo(REQUESTS + 1);
        assertThat(answered.forecasts).as("forecasts after %d answered requests", REQUESTS + 1)
            .isBetween((long) REQUESTS / 2, (long) REQUESTS);
        assertThat(answered.environment).containsEntry("echoWakeEarlyNs", 20_000L);
        // the same schedule from another address (foreign between hosts), then from the sender's with a wrong key:
        // only the last request, the sender's, is counted, and one answered request forecasts nothing
        Outcome stranger = exchange(Map.of(), "127.0.0.2", KEY);
        assertThat(stranger.counted).isEqualTo(1);
        assertThat(stranger.forecasts).isZero();
        Outcome forged = exchange(Map.of(), "127.0.0.1", MessageAuth.random());
        assertThat(forged.counted).isEqualTo(1);
        assertThat(forged.forecasts).isZero();
        // turned off: the responder waits in epoll_wait for every request, as before
        Outcome off = exchange(Map.of("udp.echoWakeEarlyNs", "0"), "127.0.0.1", KEY);
        assertThat(off.counted).isEqualTo(REQUESTS + 1);
        assertThat(off.forecasts).isZero();
        assertThat(off.environment).doesNotContainKey("echoWakeEarlyNs");
    }

    private record Outcome(long counted, long forecasts, Map<String, Long> environment) {
    }

    /**
     * {@link #REQUESTS} requests {@link #GAP_NS} apart from {@code from}, tagged under {@code key}, then one more from
     * the flow's sender (the same socket when {@code from} is its address and {@code key} the run's): once that one
     * is counted, every datagram before it has been read.
     */
    private static Outcome exchange(Map<String, String> options, String from, MessageAuth key) throws Exception {
        Plan plan = new Plan(List.of("udp"), 1, PORT, List.of(Level.parse("500")), 1_000_000_000L, 0, 1_000_000_000L,
            64, "127.0.0.1", Plan.ECHO, 0);
        FlowReceiver flow = new FlowReceiver(0, RUN, 64, 1, false, KEY);
        boolean theSenders = from.equals("127.0.0.1") && key == KEY;
        try (ReceiverEndpoint rx = new UdpTransport().openReceiver(
                 new ReceiverSpec(plan, "127.0.0.1", new FlowReceiver[] {flow}, options, "127.0.0.1", "127.0.0.1"));
             DatagramSocket sender = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
             DatagramSocket other = new DatagramSocket(new InetSocketAddress(from, 0))) {
            rx.beginStep(0);
            rx.onFlowThreads(i -> flow.beginStep(0, 4096));
            rx.beginWindow();
            InetSocketAddress server = new InetSocketAddress(InetAddress.getByName("127.0.0.1"), PORT);
            long next = System.nanoTime();
            for (int seq = 0; seq <= REQUESTS; seq++) {
                LockSupport.parkNanos(next - System.nanoTime()); // pacing the requests, not waiting for a result
                DatagramSocket s = theSenders || seq == REQUESTS ? sender : other;
                byte[] request = TaggedRequests.of(seq == REQUESTS ? KEY : key, RUN, MessageHeader.KIND_DATA, seq);
                s.send(new DatagramPacket(request, 64, server));
                next += GAP_NS;
            }
            long counted = theSenders ? REQUESTS + 1 : 1;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (flow.progress() < counted) {
                assertThat(System.nanoTime()).as("the last request counted").isLessThan(deadline);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
            }
            FlowReceiver.Summary[] closed = new FlowReceiver.Summary[1];
            rx.onFlowThreads(i -> closed[0] = flow.closeStep(1));
            rx.endStep();
            long forecasts = ((UdpReceiver) rx).readers().stream().mapToLong(StampedReader::forecasts).sum();
            return new Outcome(closed[0].received(), forecasts, rx.environment());
        }
    }
}
