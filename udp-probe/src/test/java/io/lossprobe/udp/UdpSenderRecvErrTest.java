package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.netty.NettyIo;
import io.netty.channel.epoll.Epoll;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * IP_RECVERR on the sending sockets: set where native epoll is, and the ICMP errors it queues on a socket do not
 * leave Netty's level-triggered epoll spinning on EPOLLERR. The egress drops it reports are checked in the
 * namespace lab (LabSystemTest), where a qdisc can be put on a sender's own link.
 */
class UdpSenderRecvErrTest {
    /** Nothing listens here: every datagram sent to it comes back as an ICMP port unreachable. */
    private static final int CLOSED_PORT = 41970;

    private static UdpSender open(String recvErr) throws Exception {
        return open(recvErr, "netty");
    }

    private static UdpSender open(String recvErr, String send) throws Exception {
        Plan plan = new Plan(List.of("udp"), 1, CLOSED_PORT, List.of(Level.parse("1k")),
            TimeUnit.MILLISECONDS.toNanos(100), 0, TimeUnit.MILLISECONDS.toNanos(100), 64, "127.0.0.1");
        return UdpSender.open(new SenderSpec(plan, "127.0.0.1", 7, Map.of("udp.recverr", recvErr, "udp.send", send),
            io.lossprobe.core.wire.MessageAuth.random()));
    }

    /**
     * The native path's one socket is read by no one: the ICMP error IP_RECVERR queues makes the next send fail
     * (its pending error), and that refusal empties the queue.
     */
    @Test
    @Timeout(30)
    void theNativePathEmptiesTheErrorQueueWhenASendIsRefused() throws Exception {
        assumeTrue(NativeUdp.available() && Epoll.isAvailable(), "needs the native piece");
        UdpSender sender = open("on", "native");
        try {
            assertThat(sender.environment()).containsEntry(SenderEndpoint.EGRESS_DROPS_REPORTED, 1L)
                .containsEntry("nativeSend", 1L);
            MessageWriter w = sender.writer(0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            long[] seq = {0};
            while (sender.errorQueuePurges() == 0 && System.nanoTime() < deadline) {
                sender.onReplyThread(() -> {
                    w.write(0, io.lossprobe.core.wire.MessageHeader.word1(0, 0, 64), seq[0]++, 0, 0, 0);
                    w.flush();
                });
                sender.loop().submit(() -> { }).get(5, TimeUnit.SECONDS); // the queued flush has run
            }
            assertThat(sender.errorQueuePurges()).as("the port unreachable was emptied from the queue").isPositive();
            assertThat(sender.endStep().counters()).containsKey("udp.senderErrorQueuePurges");
        } finally {
            sender.close();
        }
    }

    @Test
    void optionIsAutoOnOrOff() {
        assertThat(UdpSender.recvErrOption(NettyIo.EPOLL, "auto")).isTrue();
        assertThat(UdpSender.recvErrOption(NettyIo.NIO, "auto")).isFalse();
        assertThat(UdpSender.recvErrOption(NettyIo.EPOLL, "OFF")).isFalse();
        assertThatThrownBy(() -> UdpSender.recvErrOption(NettyIo.NIO, "on")).hasMessageContaining("native epoll");
        assertThatThrownBy(() -> UdpSender.recvErrOption(NettyIo.EPOLL, "yes")).hasMessageContaining("udp.recverr");
    }

    @Test
    @Timeout(30)
    void icmpErrorsAreEmptiedFromTheErrorQueueInsteadOfSpinningTheEventLoop() throws Exception {
        assumeTrue(Epoll.isAvailable(), "IP_RECVERR needs native epoll");
        UdpSender sender = open("on");
        try {
            assertThat(sender.environment()).containsEntry(SenderEndpoint.EGRESS_DROPS_REPORTED, 1L);
            MessageWriter w = sender.writer(0);
            sender.onReplyThread(() -> {
                for (int i = 0; i < 4; i++) {
                    w.write(0, io.lossprobe.core.wire.MessageHeader.word1(0, 0, 64), i, 0, 0, 0);
                }
                w.flush();
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (sender.errorQueuePurges() == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(sender.errorQueuePurges()).as("the port unreachable reached the error queue").isPositive();

            // A queue left full keeps EPOLLERR raised: every turn of the loop would wake, read nothing and purge
            // again, thousands of times during this 20 ms timer. An emptied queue leaves the loop asleep.
            long before = sender.errorQueuePurges();
            sender.loop().schedule(() -> { }, 20, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
            assertThat(sender.errorQueuePurges() - before).isLessThanOrEqualTo(2);
            assertThat(sender.endStep().counters()).containsKey("udp.senderErrorQueuePurges");
        } finally {
            sender.close();
        }
    }

    @Test
    void offLeavesTheSocketAsLinuxHasIt() throws Exception {
        for (String send : NativeUdp.available() ? List.of("netty", "native") : List.of("netty")) {
            UdpSender sender = open("off", send);
            try {
                assertThat(sender.environment()).as(send).containsEntry(SenderEndpoint.EGRESS_DROPS_REPORTED, 0L);
            } finally {
                sender.close();
            }
        }
    }
}
