package io.lossprobe.benchmarks;

import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.pacing.SendLoop;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.wire.MessageAuth;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The pacer per batch: one {@link SendLoop#doWork} with a writer that only sums what it is given, so the figure is
 * the loop's own cost (schedule arithmetic, lag histogram, fairness rotation, per-flow counts), not a transport's.
 * The clock is synthetic: each call advances it by exactly one full batch (64 messages per flow) at the
 * paced rate, or not at all for {@code max}. Divide by {@code 64 x flows} for the cost per message.
 */
public class SendLoopBenchmark extends HotPathBenchmark {
    private static final int BATCH_LIMIT = 64;
    private static final long WINDOW_NS = TimeUnit.HOURS.toNanos(1);

    @Param({"1", "48"})
    public int flows;

    /** Messages per second per flow; 0 is the {@code max} level. */
    @Param({"1000000", "0"})
    public long flowRate;

    private SendLoop loop;
    private CountingWriter writer;
    private long nowNs;
    private long stepNs;

    @Setup(Level.Iteration)
    public void setUp() {
        writer = new CountingWriter();
        MessageWriter[] writers = new MessageWriter[flows];
        Arrays.fill(writers, writer);
        long[] rates = new long[flows];
        Arrays.fill(rates, flowRate);
        loop = new SendLoop(writers, 7, 0, 64, rates, 0, WINDOW_NS, BATCH_LIMIT, SendFilter.NONE, null,
            new MessageAuth(1, 2));
        nowNs = 1_000_000_000L;
        loop.start(nowNs);
        stepNs = flowRate == 0 ? 0 : BATCH_LIMIT * 1_000_000_000L / flowRate;
    }

    @Benchmark
    public int doWork() {
        nowNs += stepNs;
        return loop.doWork(nowNs);
    }

    /** Accepts everything; sums the words so the JIT cannot drop the calls. */
    static final class CountingWriter implements MessageWriter {
        long sum;

        @Override
        public int write(long word0, long word1, long sequence, long intendedNs, long actualNs, long tag) {
            sum += word0 ^ word1 ^ sequence ^ intendedNs ^ actualNs ^ tag;
            return ACCEPTED;
        }

        @Override
        public void flush() {
        }
    }
}
