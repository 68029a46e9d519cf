package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A multicast publication's view of its receivers from their status messages: the one whose position is lowest
 * while they disagree is counted, with how far at most it was behind the one furthest ahead, per epoch.
 */
class StatusWatchTest {
    private static final int TERM = 64 * 1024;

    @Test
    void theLowestReceiverIsCountedWithHowFarItWasBehind() throws Exception {
        InetAddress a = InetAddress.getByName("198.18.0.101");
        InetAddress b = InetAddress.getByName("198.18.0.102");
        InetAddress c = InetAddress.getByName("198.18.0.103");
        DatagramCounts.StatusWatch watch = new DatagramCounts.StatusWatch(5, TERM);
        watch.newEpoch();
        watch.onStatus(a, 7, 0, 32_768); // alone: nobody disagrees
        watch.onStatus(b, 7, 0, 32_768); // equal: nobody is lowest
        watch.onStatus(c, 7, 0, 32_768);
        watch.onStatus(a, 7, 40_000, 32_768); // b and c behind by 40,000; b is found first
        watch.onStatus(c, 7, 41_000, 32_768); // b lowest, 41,000 behind c
        watch.onStatus(b, 7, 10_000, 32_768); // b lowest, 31,000 behind
        watch.onStatus(a, 8, 100, 32_768); // the next term: b is TERM + 100 - 10,000 behind
        List<InetAddress> who = new ArrayList<>();
        List<long[]> v = watch.snapshot(who);
        assertThat(who).containsExactly(a, b, c);
        assertThat(v.get(0)).containsExactly(3, 0, 0, 32_768);
        assertThat(v.get(1)).containsExactly(2, 4, TERM + 100 - 10_000, 32_768);
        assertThat(v.get(2)).containsExactly(2, 0, 0, 32_768);
        watch.newEpoch(); // a new step: how far behind starts again, the counts go on
        assertThat(watch.snapshot(new ArrayList<>()).get(1)).containsExactly(2, 4, 0, 32_768);
    }

    /** A SETUP frame of session 5, as Aeron's sender writes it (little-endian), at {@code offset} in a buffer. */
    private static java.nio.ByteBuffer setup(int sessionId, int offset) {
        org.agrona.concurrent.UnsafeBuffer b = new org.agrona.concurrent.UnsafeBuffer(
            new byte[offset + io.aeron.protocol.SetupFlyweight.HEADER_LENGTH]);
        io.aeron.protocol.SetupFlyweight f = new io.aeron.protocol.SetupFlyweight();
        f.wrap(b, offset, io.aeron.protocol.SetupFlyweight.HEADER_LENGTH);
        f.version(io.aeron.protocol.HeaderFlyweight.CURRENT_VERSION).flags((short) 0)
            .headerType(io.aeron.protocol.HeaderFlyweight.HDR_TYPE_SETUP)
            .frameLength(io.aeron.protocol.SetupFlyweight.HEADER_LENGTH);
        f.sessionId(sessionId).streamId(3).initialTermId(7).activeTermId(7).termOffset(0).termLength(TERM)
            .mtuLength(1408)
            .ttl(0);
        java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(b.byteArray());
        buffer.position(offset);
        return buffer;
    }

    /**
     * The SETUPs a publication sends once a receiver is known are what Aeron's min flow control caps the sender
     * after: recorded for the watch's session only, from a frame where the driver's buffer has it, and the
     * buffer's byte order left as it was.
     */
    @Test
    void aSetupSentAfterAStatusMessageIsRecorded() throws Exception {
        DatagramCounts.StatusWatch watch = new DatagramCounts.StatusWatch(5, TERM);
        DatagramCounts.tellSetup(watch, setup(5, 0));
        assertThat(watch.setupAfterStatusNs()).as("no receiver known yet: no cap").isZero();
        watch.onStatus(InetAddress.getByName("198.18.0.101"), 7, 0, 32_768);
        DatagramCounts.tellSetup(watch, setup(6, 0));
        assertThat(watch.setupAfterStatusNs()).as("another session's SETUP").isZero();
        java.nio.ByteBuffer ours = setup(5, 32);
        long before = System.nanoTime();
        DatagramCounts.tellSetup(watch, ours);
        assertThat(watch.setupAfterStatusNs()).isGreaterThanOrEqualTo(before);
        assertThat(ours.order()).isEqualTo(java.nio.ByteOrder.BIG_ENDIAN);
        assertThat(ours.position()).isEqualTo(32);
    }
}
