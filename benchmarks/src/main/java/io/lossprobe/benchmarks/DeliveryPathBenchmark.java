package io.lossprobe.benchmarks;

import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.accounting.SequenceTracker;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.ReceiverSpec;
import io.lossprobe.core.transport.SenderEndpoint;
import io.lossprobe.core.transport.SenderSpec;
import io.lossprobe.core.transport.Transport;
import io.lossprobe.core.transport.Transports;
import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A transport's send and receive paths together, through the transport SPI as the engine uses them, over real
 * sockets on 127.0.0.1 (Aeron: through the embedded media driver the transport starts): one operation is one send
 * cycle of {@code flows x messagesPerFlow} 64-byte authenticated messages, written and flushed on the sender's own
 * thread, and then waited for until every accepted message was counted by its flow's {@link FlowReceiver}. With
 * {@code -prof gc}, {@code gc.alloc.rate.norm} is what the whole JVM allocated per cycle: both paths, the receiving
 * accounting and the benchmark's own hand-over (one future, about 40-80 B); divide by the messages for a message.
 *
 * <p>{@code path}: {@code udp} (the defaults: native send, lossprobe's JNI reader), {@code udp-netty-rx} (native
 * send, Netty's recvmmsg reads, {@code udp.timestamps=user}), {@code udp-netty} (Netty on both sides), {@code tcp},
 * {@code aeron} (64 KiB terms, so 48 streams fit in /dev/shm). A message the kernel drops (UDP) is waited for at most
 * {@link #WAIT_NS}, then counted in {@link #lostMessages} and printed at tear-down: a figure with losses measured a
 * different path.
 *
 * <p>Which side allocates: after each iteration it prints the bytes each thread allocated per message counted
 * (HotSpot's per-thread allocation counter), by thread name with its numbering dropped: the sender's event loop, the
 * receivers', Aeron's driver and client threads, JMH's own.
 */
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED"}) // Agrona's Unsafe
public class DeliveryPathBenchmark extends HotPathBenchmark {
    private static final int BASE_PORT = 45800;
    private static final int SIZE = 64;
    private static final int RUN_ID = 9;
    private static final long WAIT_NS = TimeUnit.MILLISECONDS.toNanos(200);

    @Param({"udp", "udp-netty-rx", "udp-netty", "tcp", "aeron"})
    public String path;

    @Param({"1", "48"})
    public int flows;

    @Param({"1", "64"})
    public int messagesPerFlow;

    private ReceiverEndpoint receiver;
    private SenderEndpoint sender;
    private FlowReceiver[] accounting;
    private MessageWriter[] writers;
    private MessageAuth auth;
    private long word1;
    private long[] word0;
    private long[] sequences;
    private long expected;
    private long lostMessages;
    private Callable<Integer> cycle;

    @Setup
    public void open() throws Exception {
        String transportName = path.startsWith("udp") ? "udp" : path;
        Map<String, String> options = switch (path) {
            case "udp-netty-rx" -> Map.of("udp.timestamps", "user");
            case "udp-netty" -> Map.of("udp.timestamps", "user", "udp.send", "netty");
            case "aeron" -> Map.of("aeron.termLength", "64k");
            default -> Map.of();
        };
        Transport transport = Transports.available().get(transportName);
        Plan plan = new Plan(List.of(transportName), flows, BASE_PORT,
                List.of(io.lossprobe.core.plan.Level.parse("1k")),
            TimeUnit.SECONDS.toNanos(1), 0, TimeUnit.SECONDS.toNanos(1), SIZE, "127.0.0.1");
        auth = MessageAuth.random();
        accounting = new FlowReceiver[flows];
        for (int i = 0; i < flows; i++) {
            accounting[i] = new FlowReceiver(i, RUN_ID, SIZE, 1, false, auth);
        }
        receiver = transport.openReceiver(new ReceiverSpec(plan, "127.0.0.1", accounting, options));
        sender = transport.openSender(new SenderSpec(plan, "127.0.0.1", RUN_ID, options, auth));
        receiver.beginStep(0);
        sender.beginStep(0);
        int windowBits = SequenceTracker.windowFor(1 << 20, 2.0);
        receiver.onFlowThreads(i -> accounting[i].beginStep(0, windowBits));
        receiver.beginWindow();
        sender.beginWindow();
        writers = new MessageWriter[flows];
        word0 = new long[flows];
        sequences = new long[flows];
        for (int i = 0; i < flows; i++) {
            writers[i] = sender.writer(i);
            word0[i] = MessageHeader.word0(MessageHeader.KIND_DATA, i);
        }
        word1 = MessageHeader.word1(RUN_ID, 0, SIZE);
        cycle = this::sendCycle;
    }

    /** On the sender's thread, as the send loop would: tag, write, flush; the messages accepted. */
    private Integer sendCycle() {
        int accepted = 0;
        long nowNs = System.nanoTime();
        for (int f = 0; f < flows; f++) {
            MessageWriter w = writers[f];
            for (int k = 0; k < messagesPerFlow; k++) {
                long seq = sequences[f];
                long tag = auth.tag(word0[f], word1, seq, nowNs, nowNs);
                if (w.write(word0[f], word1, seq, nowNs, nowNs, tag) != MessageWriter.ACCEPTED) {
                    break; // BLOCKED: the flow is behind, as the send loop would leave it
                }
                sequences[f] = seq + 1;
                accepted++;
            }
            w.flush();
        }
        return accepted;
    }

    @Benchmark
    public long cycle() throws Exception {
        expected += sender.sendExecutor().submit(cycle).get();
        long deadline = System.nanoTime() + WAIT_NS;
        long received;
        while ((received = received()) < expected) {
            if (System.nanoTime() > deadline) {
                lostMessages += expected - received;
                expected = received;
                break;
            }
            Thread.yield(); // two cores carry the sender, the receiver and this thread
        }
        return received;
    }

    private long received() {
        long n = 0;
        for (FlowReceiver f : accounting) {
            n += f.progress();
        }
        return n;
    }

    private final com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    private Map<Long, Long> allocatedAtStart = Map.of();
    private long countedAtStart;

    @Setup(Level.Iteration)
    public void markAllocations() {
        allocatedAtStart = allocatedByThread();
        countedAtStart = expected;
    }

    /** Bytes each live thread allocated per message counted in this iteration, grouped by thread name. */
    @TearDown(Level.Iteration)
    public void printAllocationsByThread() {
        long messages = Math.max(1, expected - countedAtStart);
        Map<String, Long> byName = new java.util.TreeMap<>();
        for (Map.Entry<Long, Long> e : allocatedByThread().entrySet()) {
            java.lang.management.ThreadInfo info = threads.getThreadInfo(e.getKey());
            if (info != null) {
                String name = info.getThreadName().replaceAll("[-#]?\\d+", "");
                byName.merge(name, e.getValue() - allocatedAtStart.getOrDefault(e.getKey(), 0L), Long::sum);
            }
        }
        StringBuilder line = new StringBuilder("B/message by thread:");
        byName.forEach((name, bytes) -> {
            if (bytes > 0) {
                line.append(String.format(" %s %.2f;", name, bytes / (double) messages));
            }
        });
        System.out.println(line);
    }

    private Map<Long, Long> allocatedByThread() {
        long[] ids = threads.getAllThreadIds();
        long[] bytes = threads.getThreadAllocatedBytes(ids);
        Map<Long, Long> out = new java.util.HashMap<>();
        for (int i = 0; i < ids.length; i++) {
            if (bytes[i] >= 0) {
                out.put(ids[i], bytes[i]);
            }
        }
        return out;
    }

    @TearDown
    public void close() throws Exception {
        System.out.printf("%n%s %d x %d: %d messages counted, %d not arrived within %d ms%n", path, flows,
            messagesPerFlow, expected, lostMessages, TimeUnit.NANOSECONDS.toMillis(WAIT_NS));
        sender.close();
        receiver.close();
    }
}
