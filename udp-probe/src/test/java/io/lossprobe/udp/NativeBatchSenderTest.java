package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SendFailureListener;
import io.lossprobe.core.wire.MessageHeader;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The native send path against the kernel: a cycle's messages for several flows leave in one call, each flow's run
 * as one GSO send; a send the kernel refuses (port 0: EINVAL, every time) is reported to the failure ledger as
 * exactly the range it carried, in the same call as sends that succeed, and warm-up messages are no one's loss.
 */
class NativeBatchSenderTest {
    private static final int SIZE = 64;
    private static final int STEP = 3;
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    private final List<long[]> failed = new ArrayList<>();
    private final SendFailureListener ledger = (flow, step, first, count) -> {
        synchronized (failed) {
            failed.add(new long[] {flow, step, first, count});
        }
    };
    private DatagramSocket receiver;

    @BeforeEach
    void bind() throws Exception {
        assumeTrue(NativeUdp.available(), "needs the native piece");
        receiver = new DatagramSocket(0, InetAddress.getLoopbackAddress());
        receiver.setSoTimeout(5_000);
    }

    @AfterEach
    void close() {
        executor.shutdownNow();
        if (receiver != null) {
            receiver.close();
        }
    }

    @Test
    @Timeout(30)
    void oneCallCarriesEveryFlowAndARefusedSendFailsExactlyItsRange() throws Exception {
        // flow 0 to port 0 (the kernel refuses every send there), flow 1 to a real socket
        NativeBatchSender sender = NativeBatchSender.open(InetAddress.getLoopbackAddress(),
            new int[] {0, receiver.getLocalPort()}, SIZE, 64, 1 << 20, true, ledger, executor);
        try {
            long word1 = MessageHeader.word1(7, STEP, SIZE);
            long data0 = MessageHeader.word0(MessageHeader.KIND_DATA, 0);
            long data1 = MessageHeader.word0(MessageHeader.KIND_DATA, 1);
            long warm0 = MessageHeader.word0(MessageHeader.KIND_WARMUP, 0);
            int[] outcomes = executor.submit(() -> {
                int[] o = new int[13];
                int k = 0;
                o[k++] = sender.writer(0).write(warm0, word1, 0, 1, 2, 3); // warm-up: fails, reported nowhere
                for (int s = 0; s < 5; s++) {
                    o[k++] = sender.writer(0).write(data0, word1, s, 1, 2, 3); // one GSO send of 0-4
                }
                o[k++] = sender.writer(0).write(data0, word1, 9, 1, 2, 3); // a gap: a send of its own
                for (int s = 0; s < 6; s++) {
                    o[k++] = sender.writer(1).write(data1, word1, s, 10 + s, 2, 3);
                }
                sender.writer(0).flush();
                sender.writer(1).flush();
                return o;
            }).get(10, TimeUnit.SECONDS);
            assertThat(outcomes).containsOnly(MessageWriter.ACCEPTED);
            executor.submit(() -> { }).get(10, TimeUnit.SECONDS); // the cycle's queued flush has run

            assertThat(sender.sendCalls()).as("the cycle's sends left in one flush").isEqualTo(1);
            synchronized (failed) {
                assertThat(failed).containsExactly(new long[] {0, STEP, 0, 5}, new long[] {0, STEP, 9, 1});
            }
            byte[] buf = new byte[2048];
            for (int s = 0; s < 6; s++) {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                receiver.receive(p);
                assertThat(p.getLength()).as("GSO cut the send into messages").isEqualTo(SIZE);
                ByteBuffer b = ByteBuffer.wrap(buf, 0, p.getLength());
                assertThat(b.getLong(0)).isEqualTo(data1);
                assertThat(b.getLong(8)).isEqualTo(word1);
                assertThat(b.getLong(16)).as("in order, dense").isEqualTo(s);
                assertThat(b.getLong(24)).isEqualTo(10 + s);
                assertThat(b.getLong(48)).as("padding").isZero();
            }
            assertThat(sender.congested()).isFalse();
        } finally {
            sender.close();
        }
    }

    @Test
    @Timeout(30)
    void sendsToAnIpv6Target() throws Exception {
        InetAddress v6 = InetAddress.getByName("::1");
        DatagramSocket sink;
        try {
            sink = new DatagramSocket(0, v6);
        } catch (java.net.SocketException e) {
            assumeTrue(false, "no IPv6 loopback here: " + e.getMessage());
            return;
        }
        sink.setSoTimeout(5_000);
        NativeBatchSender sender = NativeBatchSender.open(v6, new int[] {sink.getLocalPort()}, SIZE, 64, 1 << 20,
            true, ledger, executor);
        try (sink) {
            long word1 = MessageHeader.word1(7, STEP, SIZE);
            long data = MessageHeader.word0(MessageHeader.KIND_DATA, 0);
            executor.submit(() -> {
                for (int s = 0; s < 3; s++) {
                    sender.writer(0).write(data, word1, s, 0, 0, 0);
                }
            }).get(10, TimeUnit.SECONDS);
            executor.submit(() -> { }).get(10, TimeUnit.SECONDS);
            assertThat(sender.recvErrOn()).isEqualTo(1);
            byte[] buf = new byte[2048];
            for (int s = 0; s < 3; s++) {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                sink.receive(p);
                assertThat(ByteBuffer.wrap(buf).getLong(16)).isEqualTo(s);
            }
            assertThat(failed).isEmpty();
        } finally {
            sender.close();
        }
    }

    @Test
    @Timeout(30)
    void aFlowsRegionFullMidCycleSendsWhatIsQueuedAndGoesOn() throws Exception {
        NativeBatchSender sender = NativeBatchSender.open(InetAddress.getLoopbackAddress(),
            new int[] {receiver.getLocalPort()}, SIZE, 64, 1 << 20, true, ledger, executor);
        try {
            long word1 = MessageHeader.word1(7, STEP, SIZE);
            long data = MessageHeader.word0(MessageHeader.KIND_DATA, 0);
            int messages = NativeBatchSender.regionMessages(SIZE) + 10;
            executor.submit(() -> {
                for (int s = 0; s < messages; s++) {
                    assertThat(sender.writer(0).write(data, word1, s, 0, 0, 0)).isEqualTo(MessageWriter.ACCEPTED);
                }
            }).get(10, TimeUnit.SECONDS);
            executor.submit(() -> { }).get(10, TimeUnit.SECONDS);
            assertThat(sender.sendCalls()).isEqualTo(2);
            byte[] buf = new byte[2048];
            for (int s = 0; s < messages; s++) {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                receiver.receive(p);
                assertThat(ByteBuffer.wrap(buf).getLong(16)).isEqualTo(s);
            }
            assertThat(failed).isEmpty();
        } finally {
            sender.close();
        }
    }
    /**
     * A size mix: messages of two sizes, alternating, a send-table row each (a send is of one size). A flow's
     * rows run out before its region's bytes do (small messages), so the send goes out then, and every datagram
     * arrives with its own length (before: the table's index ran past its end mid-cycle).
     */
    @Test
    @Timeout(30)
    void alternatingSizesFillTheTableBeforeTheRegionAndEachDatagramKeepsItsLength() throws Exception {
        int largest = 1518;
        NativeBatchSender sender = NativeBatchSender.open(InetAddress.getLoopbackAddress(),
            new int[] {receiver.getLocalPort()}, largest, 64, 1 << 22, true, ledger, executor);
        receiver.setReceiveBufferSize(1 << 22);
        try {
            long data = MessageHeader.word0(MessageHeader.KIND_DATA, 0);
            int messages = 2 * NativeBatchSender.regionMessages(largest) + 5;
            executor.submit(() -> {
                for (int s = 0; s < messages; s++) {
                    int length = s % 2 == 0 ? 64 : largest;
                    assertThat(sender.writer(0).write(data, MessageHeader.word1(7, STEP, length), s, 0, 0, 0))
                        .isEqualTo(MessageWriter.ACCEPTED);
                }
            }).get(10, TimeUnit.SECONDS);
            executor.submit(() -> { }).get(10, TimeUnit.SECONDS);
            byte[] buf = new byte[2048];
            for (int s = 0; s < messages; s++) {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                receiver.receive(p);
                assertThat(ByteBuffer.wrap(buf).getLong(16)).isEqualTo(s);
                assertThat(p.getLength()).as("message %d", s).isEqualTo(s % 2 == 0 ? 64 : largest);
            }
            assertThat(failed).isEmpty();
        } finally {
            sender.close();
        }
    }
}
