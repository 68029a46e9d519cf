package io.lossprobe.core.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.Transport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one contract every transport meets, on real sockets on loopback: same plan, same assertions on the
 * identities of docs/measurement.md. Each transport module has a tiny subclass.
 */
@Tag("system")
public abstract class TransportContractTest {
    protected static final String LOOPBACK = "127.0.0.1";

    /** The transport under test. */
    protected abstract Transport transport();

    /** A base port no other test module uses, so modules never collide. */
    protected abstract int basePort();

    /** Transport options (buffer sizes, I/O mode, ...). */
    protected Map<String, String> options() {
        return Map.of();
    }

    protected Plan plan(int ports, List<Level> levels, long durationMs) {
        return new Plan(List.of(transport().name()), ports, basePort(), levels,
            TimeUnit.MILLISECONDS.toNanos(durationMs), TimeUnit.MILLISECONDS.toNanos(200),
            TimeUnit.SECONDS.toNanos(2), 64, LOOPBACK);
    }

    protected RunResult run(Plan plan, StepHooks hooks) throws Exception {
        RunEngine engine = new RunEngine(plan, Map.of(transport().name(), transport()), options(),
            new RunListener() {
            }, hooks);
        return engine.run();
    }

    /** A run with a known run id and key, for tests that make messages of their own (forged or genuine). */
    protected RunResult run(Plan plan, StepHooks hooks, int runId, io.lossprobe.core.wire.MessageAuth key)
        throws Exception {
        return new RunEngine(plan, Map.of(transport().name(), transport()), options(), new RunListener() {
        }, hooks, io.lossprobe.core.engine.ReceiveSideFactory.LOCAL, LOOPBACK, runId).withAuth(key).run();
    }

    /**
     * The identities that must hold for every flow and step, and the step totals equal the flows' sums; then the
     * checks that can fail: the receiver's loss runs hold exactly the lost messages, a loss event exactly when
     * something was lost, never more received than sent, and no step warns that its figures disagree.
     */
    public static void assertIdentities(RunResult result) {
        for (StepResult step : result.steps()) {
            Counts sum = Counts.ZERO;
            for (FlowResult flow : step.flows()) {
                Counts c = flow.counts();
                assertThat(c.received() + c.lost()).as("received + lost == sent, flow %d step %d", flow.flow(),
                    step.step()).isEqualTo(c.sent());
                assertThat(c.sent() + c.sendFailed() + c.behind()).as("sent + sendFailed + behind == scheduled")
                    .isEqualTo(c.scheduled());
                assertThat(c.lostInRuns()).as("lostInRuns == lost, flow %d step %d", flow.flow(), step.step())
                    .isEqualTo(c.lost());
                assertThat(c.lossEvents() == 0).as("lossEvents == 0 iff lost == 0, flow %d", flow.flow())
                    .isEqualTo(c.lost() == 0);
                assertThat(c.received()).as("received <= sent, flow %d", flow.flow()).isLessThanOrEqualTo(c.sent());
                assertThat(c.brokenChecks()).isEmpty();
                sum = sum.plus(c);
            }
            assertThat(step.counts()).isEqualTo(sum);
            assertThat(step.warnings()).noneMatch(w -> w.startsWith("accounting check failed"));
            if (step.sizes() != null) {
                // A size mix: each size accounts its own messages, and the sizes add up to the step.
                long sent = 0;
                long received = 0;
                for (io.lossprobe.core.result.SizeCounts size : step.sizes()) {
                    assertThat(size.received() + size.lost()).as("per size: received + lost == sent, %d B",
                        size.size()).isEqualTo(size.sent());
                    assertThat(size.received()).as("per size: received <= sent").isLessThanOrEqualTo(size.sent());
                    sent += size.sent();
                    received += size.received();
                }
                assertThat(sent).as("the sizes' sent add up to the step's").isEqualTo(step.counts().sent());
                assertThat(received).as("the sizes' received add up").isEqualTo(step.counts().received());
            }
        }
        assertCountersDeclared(result);
    }

    /**
     * Every counter a real run reported, in a step's totals or a flow's map, is one its transport declared, so
     * reports can find retransmits and NAKs by category; and a declared gauge's total is its largest flow value.
     */
    public static void assertCountersDeclared(RunResult result) {
        for (StepResult step : result.steps()) {
            Map<String, io.lossprobe.core.transport.CounterDescriptor> declared =
                io.lossprobe.core.transport.CounterDescriptor.byKey(result.counters(step.transport()));
            assertThat(declared.keySet()).as("declared counters of %s", step.transport())
                .containsAll(step.transportCounters().keySet());
            for (FlowResult flow : step.flows()) {
                assertThat(declared.keySet()).as("declared counters of %s, flow %d", step.transport(), flow.flow())
                    .containsAll(flowCounters(flow).keySet());
            }
            // Where every flow carries a key, the step's total is formed from them as the declaration says.
            for (Map.Entry<String, Long> total : step.transportCounters().entrySet()) {
                String key = total.getKey();
                if (step.flows().isEmpty() || !step.flows().stream().allMatch(f -> flowCounters(f).containsKey(key))) {
                    continue;
                }
                java.util.stream.LongStream values = step.flows().stream().mapToLong(f -> flowCounters(f).get(key));
                long expected = declared.get(key).kind() == io.lossprobe.core.transport.CounterDescriptor.Kind.GAUGE
                    ? values.max().orElseThrow() : values.sum();
                assertThat(total.getValue()).as("%s total of %s", step.transport(), key).isEqualTo(expected);
            }
        }
    }

    private static Map<String, Long> flowCounters(FlowResult f) {
        return f.transport() == null ? Map.of() : f.transport();
    }

    @Test
    @Timeout(120)
    void everyFlowAndStepSatisfiesTheIdentitiesAndNothingIsLostAtModestRates(@TempDir Path dir) throws Exception {
        Plan plan = plan(8, List.of(Level.parse("4k"), Level.parse("20k")), 1000);
        RunResult result = run(plan, StepHooks.NONE);

        assertThat(result.status()).hasToString("complete");
        assertThat(result.steps()).hasSize(2);
        assertIdentities(result);
        for (StepResult step : result.steps()) {
            // Exact split: 4k over 8 ports for 1s is exactly 4,000 scheduled.
            assertThat(step.counts().scheduled()).isEqualTo(step.level().ratePerSecond());
            // A sender off the CPU as the window ends sends at most a batch per flow in its last pass and leaves
            // the rest behind (counted, and the identities hold): a real condition on a busy host, not a defect.
            assertThat(step.counts().sent()).isBetween(step.counts().scheduled() * 9 / 10, step.counts().scheduled());
            assertThat(step.counts().corrupt()).isZero();
            assertThat(step.counts().duplicates()).isZero();
            long kernelDrops = step.socketDrops() == null ? 0 : step.socketDrops();
            assertThat(step.counts().lost()).as("loss only where the kernel counted drops").isEqualTo(kernelDrops);
            assertThat(step.delay().count()).isEqualTo(step.counts().received());
            // Transit is delay minus the sender's lag, message by message: never more (1% histogram precision).
            assertThat(step.transit().count()).isEqualTo(step.delay().count());
            assertThat(step.transit().p50Ns()).isLessThanOrEqualTo(step.delay().p50Ns() + step.delay().p50Ns() / 50);
            assertThat(step.transit().maxNs()).isLessThanOrEqualTo(step.delay().maxNs() + step.delay().maxNs() / 50);
        }

        Path file = dir.resolve("r.json");
        ResultFiles.write(file, result);
        RunResult back = ResultFiles.read(file);
        assertThat(back.steps().get(1).counts()).isEqualTo(result.steps().get(1).counts());
        assertThat(back.counters()).isEqualTo(result.counters());
        assertThat(Files.size(file)).isPositive();
    }

    @Test
    @Timeout(120)
    void lossInjectedOnTheSendPathComesBackExactly() throws Exception {
        // Flow 2 loses 5..7 and 100; flow 5 loses 40..49: three runs, 14 messages, longest 10.
        SendFilter filter = (flow, seq) -> (flow == 2 && ((seq >= 5 && seq <= 7) || seq == 100))
            || (flow == 5 && seq >= 40 && seq <= 49);
        Plan plan = plan(8, List.of(Level.parse("8k")), 500);
        RunResult result = run(plan, StepHooks.sendFilter(filter));

        assertIdentities(result);
        StepResult step = result.steps().get(0);
        assertThat(step.counts().lost()).isEqualTo(14);
        assertThat(step.counts().lossEvents()).isEqualTo(3);
        assertThat(step.lossBurst().max()).isEqualTo(10);
        assertThat(step.lossBurst().histogram()).containsEntry("1", 1L).containsEntry("3-4", 1L)
            .containsEntry("9-16", 1L);
        assertThat(step.flows().get(2).counts().lost()).isEqualTo(4);
        assertThat(step.flows().get(2).counts().lossEvents()).isEqualTo(2);
        assertThat(step.flows().get(5).counts().lost()).isEqualTo(10);
        assertThat(step.flows().get(5).lossBurst().max()).isEqualTo(10);
        for (FlowResult f : step.flows()) {
            if (f.flow() != 2 && f.flow() != 5) {
                assertThat(f.counts().lost()).as("flow %d", f.flow()).isZero();
            }
        }
    }

    /**
     * A size mix of 64 and 300 bytes, one each per cycle of two: flow f's message s is 64 bytes when s + f is even
     * (the mix's layout, as documented). Flow 1 loses every third message of its first 300 and flow 2 ten in a row;
     * each size's loss is exactly the dropped messages of that size, counted here from their numbers.
     */
    @Test
    @Timeout(120)
    void aSizeMixsLossIsExactPerSize() throws Exception {
        SendFilter filter = (flow, seq) -> (flow == 1 && seq < 300 && seq % 3 == 0) || (flow == 2 && seq >= 50
            && seq < 60);
        Plan plan = plan(4, List.of(Level.parse("4k")), 500).withSizeMix("64:1,300:1");
        assertThat(plan.messageSize()).isEqualTo(300);
        RunResult result = run(plan, StepHooks.sendFilter(filter));
        assertIdentities(result);
        StepResult step = result.steps().get(0);
        long small = 0;
        long large = 0;
        for (int flow = 1; flow <= 2; flow++) {
            for (long seq = 0; seq < 300; seq++) {
                if (filter.drop(flow, seq)) {
                    if ((seq + flow) % 2 == 0) {
                        small++;
                    } else {
                        large++;
                    }
                }
            }
        }
        assertThat(step.counts().lost()).isEqualTo(110);
        assertThat(step.sizes()).extracting(io.lossprobe.core.result.SizeCounts::size).containsExactly(64, 300);
        assertThat(step.sizes().get(0).lost()).as("64-byte messages lost").isEqualTo(small);
        assertThat(step.sizes().get(1).lost()).as("300-byte messages lost").isEqualTo(large);
        assertThat(step.counts().corrupt()).isZero();
        assertThat(Math.abs(step.sizes().get(0).sent() - step.sizes().get(1).sent())).as("one of each per cycle")
            .isLessThanOrEqualTo(4);
    }

    /**
     * Two message sizes (a pass each, the second fragmenting for UDP where the MTU is 1500) cut into 250 ms
     * intervals: every interval count adds up to its step's exactly, and each step says its size.
     */
    @Test
    @Timeout(120)
    void intervalsAddUpToTheirStepExactlyAtEverySize() throws Exception {
        Plan plan = new Plan(List.of(transport().name()), 8, basePort(), List.of(Level.parse("8k")),
            TimeUnit.MILLISECONDS.toNanos(1000), TimeUnit.MILLISECONDS.toNanos(200), TimeUnit.SECONDS.toNanos(2), 64,
            LOOPBACK, Plan.STREAM, 0, Map.of(), List.of(64, 1400), null, TimeUnit.MILLISECONDS.toNanos(250));
        RunResult result = run(plan, StepHooks.NONE);
        assertThat(result.steps()).hasSize(2);
        assertIdentities(result);
        assertThat(result.steps()).extracting(StepResult::messageSize).containsExactly(64, 1400);
        for (StepResult step : result.steps()) {
            assertThat(step.counts().scheduled()).isEqualTo(8000);
            assertThat(step.counts().sent()).isBetween(7200L, 8000L); // behind only if starved at the window's end
            assertThat(step.intervals()).hasSize(4);
            io.lossprobe.core.testing.IntervalAssertions.assertIntervalsAddUp(step);
        }
    }

    /**
     * A refusal mid-window (the local stack refusing ten messages of flow 3) takes no wire sequence: the receiver
     * sees a dense sequence, so there is no phantom loss event, and the ten show as sendFailed only. Before dense
     * sequences this gave lost 0 but one loss event, a burst of 10.
     */
    @Test
    @Timeout(120)
    void aRefusalMidWindowIsSendFailedWithNoLossEvent() throws Exception {
        SendFilter refuse = SendFilter.refusing((flow, index) -> flow == 3 && index >= 100 && index < 110);
        Plan plan = plan(8, List.of(Level.parse("8k")), 500);
        RunResult result = run(plan, StepHooks.sendFilter(refuse));

        assertIdentities(result);
        StepResult step = result.steps().get(0);
        Counts flow3 = step.flows().get(3).counts();
        assertThat(flow3.sendFailed()).isEqualTo(10);
        assertThat(flow3.sent() + flow3.behind()).isEqualTo(flow3.scheduled() - 10);
        assertThat(flow3.lost()).isZero();
        assertThat(flow3.lossEvents()).isZero();
        assertThat(flow3.lostInRuns()).isZero();
        assertThat(step.counts().lost()).isEqualTo(step.socketDrops() == null ? 0 : step.socketDrops());
        assertThat(step.counts().sendFailed()).isEqualTo(10);
    }

    /**
     * {@code --packets}: one row per wire sequence number of every flow, in order, and the rows add up to each
     * flow's counts exactly, with loss injected on one flow and refusals (no wire number, no row) on another.
     */
    @Test
    @Timeout(120)
    void everyPacketRowAddsUpToItsFlowsCounts() throws Exception {
        SendFilter filter = new SendFilter() {
            @Override
            public boolean drop(int flow, long sequence) {
                return flow == 1 && (sequence >= 10 && sequence < 20 || sequence == 50);
            }

            @Override
            public boolean refuse(int flow, long scheduleIndex) {
                return flow == 2 && scheduleIndex >= 30 && scheduleIndex < 35;
            }
        };
        Plan plan = plan(4, List.of(Level.parse("4k"), Level.parse("8k")), 300);
        List<io.lossprobe.core.engine.PacketStep> recorded = new java.util.ArrayList<>();
        RunResult result = new RunEngine(plan, Map.of(transport().name(), transport()), options(), new RunListener() {
        }, StepHooks.sendFilter(filter)).withPackets(new io.lossprobe.core.engine.PacketCapture(1_000_000, 1,
            recorded::add)).run();
        assertIdentities(result);
        assertThat(recorded).hasSize(2);
        for (io.lossprobe.core.engine.PacketStep packets : recorded) {
            StepResult step = result.steps().get(packets.result().step());
            assertThat(packets.result().counts()).isEqualTo(step.counts());
            long[][] tally = new long[plan.ports()][8];
            long[] next = new long[plan.ports()];
            java.util.List<Long> lostOfFlow1 = new java.util.ArrayList<>();
            packets.rows((flow, seq, status, intended, sent, received, reordered, duplicates, lateDuplicates) -> {
                assertThat(seq).as("flow %d's rows in wire order", flow).isEqualTo(next[flow]++);
                long[] t = tally[flow];
                t[0]++;
                switch (status) {
                    case io.lossprobe.core.engine.PacketStep.RECEIVED -> {
                        t[1]++;
                        assertThat(sent).as("sent at or after its intended time").isGreaterThanOrEqualTo(intended);
                        assertThat(received).as("a received row has its arrival").isNotEqualTo(
                            io.lossprobe.core.engine.PacketStep.NONE);
                    }
                    case io.lossprobe.core.engine.PacketStep.LOST -> {
                        t[2]++;
                        if (flow == 1) {
                            lostOfFlow1.add(seq);
                        }
                    }
                    case io.lossprobe.core.engine.PacketStep.LATE -> t[3]++;
                    case io.lossprobe.core.engine.PacketStep.FAILED -> t[4]++;
                    default -> throw new AssertionError("status " + status);
                }
                t[5] += reordered ? 1 : 0;
                t[6] += duplicates;
                t[7] += lateDuplicates;
            });
            for (FlowResult f : step.flows()) {
                Counts c = f.counts();
                long[] t = tally[f.flow()];
                String what = "step " + step.step() + " flow " + f.flow();
                assertThat(t[0] - t[4]).as("rows not failed == sent, %s", what).isEqualTo(c.sent());
                assertThat(t[4]).as("failed rows, %s", what).isEqualTo(packets.failures()[f.flow()].total());
                assertThat(t[1]).as("received rows, %s", what).isEqualTo(c.received());
                assertThat(t[2] + t[3]).as("lost and late rows == lost, %s", what).isEqualTo(c.lost());
                assertThat(t[3]).as("late rows, %s", what).isEqualTo(c.late());
                assertThat(t[5]).as("reordered rows, %s", what).isEqualTo(c.reordered());
                assertThat(t[6]).as("duplicates, %s", what).isEqualTo(c.duplicates());
                assertThat(t[7]).as("late duplicates, %s", what).isEqualTo(c.lateDuplicates());
                assertThat(packets.overLimit(f.flow())).isZero();
            }
            // The injected loss is exactly flow 1's lost rows (a kernel drop elsewhere would show in its own flow).
            assertThat(lostOfFlow1).as("flow 1's lost rows").containsAll(
                java.util.stream.LongStream.concat(java.util.stream.LongStream.range(10, 20),
                    java.util.stream.LongStream.of(50)).boxed().toList());
            assertThat(step.flows().get(2).counts().sendFailed()).isGreaterThanOrEqualTo(5);
        }
    }
}
