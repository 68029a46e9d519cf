package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.netty.NettyIo;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class UdpEnvironmentTest {
    /** The keys results files carry under {@code environment} (docs/results.md): they never change spelling. */
    @Test
    void keysAreTheOnesResultsFilesCarry() {
        assertThat(Arrays.stream(UdpEnvironment.values()).map(k -> k.key)).containsExactly(
            "sendBufferRequested", "sendBufferGranted", "gsoSegmentsPerSend", "nativeSend", "sendTimerSlackNs",
            "sendPinnedThreads", "sendSliceNs", "replyKernelTimestamps", "receiveBufferRequested",
            "receiveBufferGranted", "receiveThreads", "readIntervalNs", "echoWakeEarlyNs", "gro", "groAuto",
            "receiveTimerSlackNs", "receivePinnedThreads", "receiveSliceNs", "receiveBusyPollUs", "kernelTimestamps",
            "dscpChecked", "timingPrecision");
        assertThat(NettyIo.EPOLL.environmentKey()).isEqualTo("io.epoll");
        assertThat(NettyIo.NIO.environmentKey()).isEqualTo("io.nio");
    }
}
