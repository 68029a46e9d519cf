package io.lossprobe.udp;

import io.lossprobe.benchmarks.HotPathBenchmark;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The UDP transport's send path per send cycle, real sockets and all: {@code flows} flows each hand
 * {@code messagesPerFlow} 64-byte messages to their writer and flush, on the sender's own event loop, through the
 * native path ({@code udp.send=native}: one sendmmsg per cycle) or Netty's (a GSO send per flow). The receiving
 * sockets on 127.0.0.1 are bound and never read, so after their buffers fill the kernel drops at the socket: the
 * kernel's per-datagram cost is in the figure but not a reader's. One operation is one cycle plus the hand-over to
 * the loop and back (the same on both paths); divide by {@code flows x messagesPerFlow} for a message. With
 * {@code -prof gc}, {@code gc.alloc.rate.norm} is the bytes allocated per cycle over the whole JVM.
 * In a package of udp-probe's own, as its types are package-private; JMH's settings are {@link HotPathBenchmark}'s.
 */
public class UdpSendPathBenchmark extends HotPathBenchmark {
    private static final int BASE_PORT = 45700;
    private static final int SIZE = 64;

    @Param({"native", "netty"})
    public String path;

    @Param({"1", "48"})
    public int flows;

    @Param({"1", "64"})
    public int messagesPerFlow;

    private UdpSender sender;
    private DatagramSocket[] sinks;
    private long[] sequences;
    private long word1;
    private long[] word0;
    private Callable<Integer> cycle;
    private final Runnable nothing = () -> { };

    @Setup
    public void open() throws Exception {
        if (path.equals("native") && !NativeUdp.available()) {
            throw new IllegalStateException("no native piece: " + NativeUdp.unavailableBecause());
        }
        sinks = new DatagramSocket[flows];
        for (int i = 0; i < flows; i++) {
            sinks[i] = new DatagramSocket(BASE_PORT + i, InetAddress.getLoopbackAddress());
        }
        Plan plan = new Plan(List.of("udp"), flows, BASE_PORT, List.of(Level.parse("1k")),
            TimeUnit.SECONDS.toNanos(1), 0, TimeUnit.SECONDS.toNanos(1), SIZE, "127.0.0.1");
        sender = UdpSender.open(new SenderSpec(plan, "127.0.0.1", 7, Map.of("udp.send", path),
            MessageAuth.random()));
        sequences = new long[flows];
        word0 = new long[flows];
        for (int i = 0; i < flows; i++) {
            word0[i] = MessageHeader.word0(MessageHeader.KIND_DATA, i);
        }
        word1 = MessageHeader.word1(7, 0, SIZE);
        cycle = () -> {
            int accepted = 0;
            for (int f = 0; f < flows; f++) {
                MessageWriter w = sender.writer(f);
                for (int k = 0; k < messagesPerFlow; k++) {
                    if (w.write(word0[f], word1, sequences[f], 1, 2, 3) == MessageWriter.ACCEPTED) {
                        sequences[f]++;
                        accepted++;
                    }
                }
                w.flush();
            }
            return accepted;
        };
    }

    @Benchmark
    public int cycle() throws Exception {
        var done = sender.loop().submit(cycle);
        sender.loop().submit(nothing).get(); // behind the native path's queued flush: the cycle's sends are out
        return done.get();
    }

    @TearDown
    public void close() {
        sender.close();
        for (DatagramSocket s : sinks) {
            s.close();
        }
    }
}
