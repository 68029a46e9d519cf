package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.Transport;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The child side of {@link FullSendBufferTest}: a real run on the loopback of a network namespace whose qdisc (tbf)
 * holds what the sockets send, so a send socket with a tiny SO_SNDBUF fills and the kernel answers EAGAIN. Checks
 * the accounting contract there (and exits non-zero with the failed check): both identities on every flow, no loss
 * (tbf queues, it does not drop), no sendFailed (a full buffer refuses nothing), the shortfall counted as behind;
 * and the pooled direct memory in use stays under the bound the Netty path documents. Prints its figures.
 *
 * <p>Arguments: {@code native|netty}.
 */
public final class FullSendBufferRun extends TransportContractTest {
    static final int FLOWS = 2;
    static final int BASE_PORT = 41900;
    /** 40k/s per flow against a link of about 9.4k datagrams/s in all: a flow blocks within half a second. */
    static final String LEVEL = "80k";
    static final int SIZE = 64;
    static final long SLACK_BYTES = 8L << 20;
    private final String path;

    private FullSendBufferRun(String path) {
        this.path = path;
    }

    @Override
    protected Transport transport() {
        return new UdpTransport();
    }

    @Override
    protected int basePort() {
        return BASE_PORT;
    }

    @Override
    protected Map<String, String> options() {
        // sndbuf 1: the kernel's minimum (about 4.6 KiB), a few datagrams' skbs.
        return Map.of("udp.send", path, "sndbuf", "1");
    }

    public static void main(String[] args) throws Exception {
        new FullSendBufferRun(args[0]).check();
        System.exit(0); // the engine's threads are done; no lingering non-daemon thread holds the JVM
    }

    private void check() throws Exception {
        AtomicLong mostDirect = new AtomicLong();
        // The allocator Netty's channels use (adaptive since Netty 4.2): every pooled direct buffer of the process.
        ByteBufAllocatorMetric pool = ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric();
        StepHooks sample = new StepHooks() {
            @Override
            public void duringWindow(String transport, int step, ReceiverEndpoint receiver, long elapsedNs) {
                mostDirect.accumulateAndGet(pool.usedDirectMemory(), Math::max);
            }
        };
        Plan plan = new Plan(List.of("udp"), FLOWS, BASE_PORT, List.of(Level.parse(LEVEL)),
            TimeUnit.SECONDS.toNanos(2), TimeUnit.MILLISECONDS.toNanos(200), TimeUnit.SECONDS.toNanos(6), SIZE,
            LOOPBACK);
        // Tmax 6 s: the Netty path's queues (up to 1 MiB of 64-message batches a flow, about 16k messages) must
        // cross the shaped link after the window; what did not by Tmax would count lost, rightly.
        RunResult result = run(plan, sample);
        StepResult step = result.steps().get(0);
        Counts c = step.counts();
        Long nativeSend = result.environment().transportSettings().get("udp.nativeSend");
        System.out.printf("path %s nativeSend %s: scheduled %d sent %d behind %d sendFailed %d received %d lost %d"
                + " socketDrops %s; most pooled direct memory in use %d bytes%n", path,
            nativeSend, c.scheduled(), c.sent(), c.behind(),
            c.sendFailed(), c.received(), c.lost(), step.transportCounters().get("udp.socketDrops"),
            mostDirect.get());
        assertThat(result.status()).hasToString("complete");
        assertIdentities(result);
        assertThat(nativeSend).as("the path asked for ran").isEqualTo(path.equals("native") ? 1L : 0L);
        System.out.println("sender limit: " + step.senderLimit() + " " + step.warnings());
        assertThat(step.senderLimit().reason()).as("the full buffer held the sender back")
            .isEqualTo(io.lossprobe.core.result.SenderLimit.Reason.HELD_BY_KERNEL);
        assertThat(step.senderLimit().blockedSends()).isPositive();
        assertThat(step.warnings()).anyMatch(w -> w.contains(": held back by its own kernel ("));
        for (FlowResult flow : step.flows()) {
            Counts f = flow.counts();
            assertThat(f.behind()).as("flow %d fell behind: the full buffer's shortfall", flow.flow())
                .isGreaterThan(f.scheduled() / 4);
            assertThat(f.sendFailed()).as("flow %d: a full buffer refuses nothing", flow.flow()).isZero();
            assertThat(f.lost()).as("flow %d: what the socket took arrived", flow.flow()).isZero();
            assertThat(f.duplicates()).as("flow %d: nothing sent twice", flow.flow()).isZero();
        }
        if (path.equals("netty")) {
            // Each flow holds at most the high water mark plus one GSO batch's buffer; the pool reserves memory in
            // chunks, so SLACK_BYTES more for that and the rest of the process (the receivers' buffers).
            long perFlow = UdpSender.HIGH_WATER_MARK_BYTES + (long) SIZE * GsoSends.MAX_GSO_SEGMENTS;
            long bound = FLOWS * perFlow + SLACK_BYTES;
            assertThat(mostDirect.get()).as("pooled direct memory in use, bound %d", bound).isPositive()
                .isLessThanOrEqualTo(bound);
        }
    }
}
