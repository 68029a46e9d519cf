package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.counters.HostCounters;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Counts;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.testing.MemoryTransport;
import io.lossprobe.core.testing.MemoryTransport.Arrival;
import io.lossprobe.core.testing.MemoryTransport.WindowSample;
import io.lossprobe.core.testing.MemoryTransport.Write;
import io.lossprobe.core.testing.VirtualTime;
import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.ReceiverEndpoint;
import io.lossprobe.core.transport.SendPacing;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine's step boundaries (window edges, drain and Tmax, late arrivals, refusals, failures after accept,
 * blocking, abort, counter sampling) on {@link VirtualTime} and the {@link MemoryTransport}: the real
 * {@link RunEngine}, {@link LocalSendSide}, send driver, send loop and receivers' accounting, with time that moves
 * only when the engine waits. Every figure is exact; a run of several virtual seconds takes milliseconds.
 */
@Timeout(30)
class EngineBoundaryTest {
    private static final long MS = 1_000_000L;
    private static final int RUN_ID = 4242;
    private static final String ACCOUNTING_FAILED = "accounting check failed";

    /** Starts far from 0, as a real clock does: nothing may assume the clock's origin. */
    private final VirtualTime time = new VirtualTime(7_000 * MS);
    private final MemoryTransport transport = new MemoryTransport(time);
    private final List<StepResult> finished = new ArrayList<>();
    private final List<RunResult> updates = new ArrayList<>();
    private RunEngine engine;
    /** The host's counters the engine samples, when a test scripts them (null: the real /proc). */
    private java.util.function.Supplier<HostCounters.Sample> hostCounters;
    /** Called from the engine's thread on every progress report. */
    private RunListener progress = new RunListener() {
    };

    private static Plan plan(int ports, long rate, long windowMs, long warmupMs, long drainMs, int steps) {
        return new Plan(List.of(MemoryTransport.NAME), ports, 40000, Collections.nCopies(steps, Level.of(rate)),
            windowMs * MS, warmupMs * MS, drainMs * MS, 64, "127.0.0.1");
    }

    private RunResult run(Plan plan) throws Exception {
        return run(plan, StepHooks.NONE);
    }

    private RunResult run(Plan plan, StepHooks hooks) throws Exception {
        RunListener listener = new RunListener() {
            @Override
            public void progress(String t, int step, Phase phase, long elapsedNs, long totalNs, long sent,
                                 long received) {
                progress.progress(t, step, phase, elapsedNs, totalNs, sent, received);
            }

            @Override
            public void stepFinished(StepResult result) {
                finished.add(result);
            }

            @Override
            public void resultsUpdated(RunResult partial) {
                updates.add(partial);
            }
        };
        engine = new RunEngine(plan, Map.of(MemoryTransport.NAME, transport), Map.of(), listener, hooks,
            ReceiveSideFactory.LOCAL, SendSideFactory.local("127.0.0.1", time), RUN_ID).withClock(time);
        if (hostCounters != null) {
            engine.withHostCounters(hostCounters);
        }
        return engine.run();
    }

    @AfterEach
    void noVirtualTaskFailed() {
        assertThat(time.taskFailures()).isEmpty();
    }

    /** Every check that can fail holds, flow by flow and in the totals, and no step warns that one broke. */
    private static void assertChecksHold(RunResult result) {
        for (StepResult step : result.steps()) {
            for (FlowResult flow : step.flows()) {
                assertThat(flow.counts().identitiesHold()).as("identities, flow %d step %d", flow.flow(),
                    step.step()).isTrue();
                assertThat(flow.counts().brokenChecks()).as("flow %d step %d", flow.flow(), step.step()).isEmpty();
            }
            assertThat(step.counts().brokenChecks()).isEmpty();
            assertThat(step.warnings()).noneMatch(w -> w.startsWith(ACCOUNTING_FAILED));
        }
    }

    private static Counts flow(RunResult result, int step, int flow) {
        return result.steps().get(step).flows().get(flow).counts();
    }

    private List<Write> dataWrites(int step, int flow) {
        return transport.writes().stream().filter(w -> w.data() && w.step() == step && w.flow() == flow).toList();
    }

    private List<Write> warmupWrites(int step, int flow) {
        return transport.writes().stream().filter(w -> !w.data() && w.step() == step && w.flow() == flow).toList();
    }

    private static List<Long> acceptedSequences(List<Write> writes) {
        return writes.stream().filter(Write::accepted).map(Write::sequence).toList();
    }

    private static List<Long> range(long from, long to) {
        return LongStream.range(from, to).boxed().toList();
    }

    // ---- window edges ----

    /**
     * A run that fails mid-step (a server gone, here a hook that throws during step 1's window) keeps the steps it
     * completed and says in its error which step was running and what failed, with the exception's simple name when
     * the failure is not lossprobe's own.
     */
    @Test
    void aRunThatFailsMidStepKeepsTheCompletedStepsAndNamesTheRunningOne() {
        StepHooks failInStepOne = new StepHooks() {
            @Override
            public void duringWindow(String t, int step, ReceiverEndpoint receiver, long elapsedNs)
                throws java.io.IOException {
                if (step == 1 && elapsedNs > 20 * MS) {
                    throw new java.net.SocketException("Connection reset");
                }
            }
        };
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> run(plan(2, 1_000, 100, 0, 20, 3), failInStepOne))
            .isInstanceOf(java.net.SocketException.class);
        RunResult last = updates.get(updates.size() - 1);
        assertThat(last.status()).hasToString("failed");
        assertThat(last.steps()).extracting(StepResult::step).containsExactly(0);
        assertThat(last.error()).isEqualTo(MemoryTransport.NAME
            + " step 1 at 1k/s (64 B) failed: SocketException: Connection reset");
    }

    @Test
    void warmUpIsNeverCountedAndTheWindowBeginsWithDataSequenceZeroAtItsStart() throws Exception {
        // 1,000/s over 3 flows: 334 + 333 + 333, the remainder on the first flows; a 1 s window schedules exactly
        // that, a 200 ms warm-up floor(0.2 x rate) = 66 per flow.
        RunResult result = run(plan(3, 1000, 1000, 200, 100, 1));
        long[] perFlow = {334, 333, 333};
        for (int f = 0; f < 3; f++) {
            Counts c = flow(result, 0, f);
            assertThat(c.scheduled()).isEqualTo(perFlow[f]);
            assertThat(c.sent()).isEqualTo(perFlow[f]);
            assertThat(c.received()).isEqualTo(perFlow[f]);
            assertThat(c.lost() + c.behind() + c.sendFailed() + c.duplicates() + c.corrupt()).isZero();

            List<Write> warm = warmupWrites(0, f);
            assertThat(warm).hasSize(66).allMatch(Write::accepted);
            long start = warm.get(0).intendedNs();
            long windowStart = start + 200 * MS;
            assertThat(warm.get(warm.size() - 1).atNs()).isLessThan(windowStart);
            int flowIndex = f;
            assertThat(transport.arrivals()).filteredOn(a -> a.flow() == flowIndex && !a.data())
                .as("the warm-up reached the receiver, which did not count it").hasSize(66)
                .noneMatch(Arrival::counted);

            List<Write> data = dataWrites(0, f);
            assertThat(data.get(0).sequence()).isZero();
            assertThat(data.get(0).intendedNs()).isEqualTo(windowStart);
            assertThat(data.get(0).atNs()).isEqualTo(windowStart);
            assertThat(acceptedSequences(data)).isEqualTo(range(0, perFlow[f]));
        }
        StepResult step = result.steps().get(0);
        assertThat(step.counts().scheduled()).isEqualTo(1000);
        assertThat(step.counts().received()).isEqualTo(1000);
        assertThat(step.windowNs()).isEqualTo(1000 * MS);
        assertThat(step.senderLag().maxNs()).as("virtual time: every message left at its intended time").isZero();
        assertThat(step.counterSkewNs()).isZero();
        assertThat(step.saturated()).isFalse();
        assertChecksHold(result);
    }

    @Test
    void aWindowOfPartSecondsSchedulesEachFlowsFloor() throws Exception {
        // 250 ms: floor(0.25 x 334) = 83, floor(0.25 x 333) = 83: the level is per second, not per window.
        RunResult result = run(plan(3, 1000, 250, 0, 100, 1));
        for (int f = 0; f < 3; f++) {
            assertThat(flow(result, 0, f).scheduled()).isEqualTo(83);
            assertThat(acceptedSequences(dataWrites(0, f))).isEqualTo(range(0, 83));
        }
        assertThat(result.steps().get(0).counts().received()).isEqualTo(249);
        assertChecksHold(result);
    }

    // ---- drain, Tmax and late arrivals ----

    /**
     * The drain starts when the sender is done (its last message, seq 99, at 99 ms) and lasts Tmax = 200 ms: a
     * message arriving exactly at Tmax is received, one nanosecond later is lost, then counted late (a first
     * arrival, not a duplicate) when it arrives during the next step.
     */
    @ParameterizedTest
    @ValueSource(longs = {0, 1})
    void theDrainWaitsExactlyTmax(long pastTmaxNs) throws Exception {
        transport.deliverLate(0, 0, 99, 200 * MS + pastTmaxNs);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 2));
        Counts atClose = finished.get(0).flows().get(0).counts();
        Counts c = flow(result, 0, 0);
        if (pastTmaxNs == 0) {
            assertThat(atClose.received()).isEqualTo(100);
            assertThat(c.lost()).isZero();
            assertThat(c.late()).isZero();
        } else {
            assertThat(atClose.received()).isEqualTo(99);
            assertThat(atClose.lost()).isEqualTo(1);
            assertThat(atClose.late()).as("not arrived when the step closed").isZero();
            assertThat(c.lost()).isEqualTo(1);
            assertThat(c.lostInRuns()).isEqualTo(1);
            assertThat(c.lossEvents()).isEqualTo(1);
            assertThat(c.late()).as("arrived after the close").isEqualTo(1);
            assertThat(c.lateDuplicates()).isZero();
        }
        assertThat(flow(result, 1, 0).late()).isZero();
        assertChecksHold(result);
    }

    @Test
    void aMessageDelayedBeyondTmaxIsLostThenLateInTheSnapshots() throws Exception {
        // Seq 50 leaves at 50 ms and arrives 300 ms later; the step closes at 99 + 200 ms; step 1 is under way.
        transport.deliverLate(0, 0, 50, 300 * MS);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 2));

        Counts atClose = finished.get(0).flows().get(0).counts();
        assertThat(atClose.received()).isEqualTo(99);
        assertThat(atClose.lost()).isEqualTo(1);
        assertThat(atClose.late()).isZero();
        // The snapshot written after step 1 already counts it against step 0.
        RunResult afterStep1 = updates.stream().filter(r -> r.steps().size() == 2).findFirst().orElseThrow();
        assertThat(flow(afterStep1, 0, 0).late()).isEqualTo(1);
        Counts c = flow(result, 0, 0);
        assertThat(c.received()).isEqualTo(99);
        assertThat(c.lost()).isEqualTo(1);
        assertThat(c.lostInRuns()).isEqualTo(1);
        assertThat(c.lossEvents()).isEqualTo(1);
        assertThat(c.late()).isEqualTo(1);
        assertThat(c.lateDuplicates()).isZero();
        assertThat(result.steps().get(0).counts().late()).isEqualTo(1);
        assertThat(flow(result, 1, 0).received()).isEqualTo(100);
        assertThat(flow(result, 1, 0).corrupt()).as("a late message of step 0 is no stray of step 1").isZero();
        assertChecksHold(result);
    }

    @Test
    void aDuplicateArrivingAfterTheCloseIsALateDuplicateNotLate() throws Exception {
        // Everything arrives, so step 0 closes a drain grace after 99 ms; the copy of seq 50 (sent at 50 ms)
        // arrives at 200 ms, while step 1 sends.
        transport.duplicate(0, 0, 50, 150 * MS);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 2));
        Arrival copy = transport.arrivals().stream().filter(a -> a.step() == 0 && a.sequence() == 50)
            .reduce((a, b) -> b).orElseThrow();
        assertThat(copy.atNs()).as("after step 0 closed").isGreaterThan(dataWrites(1, 0).get(0).atNs());
        Counts c = flow(result, 0, 0);
        assertThat(c.received()).isEqualTo(100);
        assertThat(c.lost()).isZero();
        assertThat(c.duplicates()).isZero();
        assertThat(c.late()).isZero();
        assertThat(c.lateDuplicates()).isEqualTo(1);
        assertThat(c.lossEvents()).isZero();
        assertChecksHold(result);
    }

    /**
     * Finding: a receiver classifies late arrivals only against the last closed step's tracker; a copy for an
     * older step is "assumed a first arrival" and counted late, so a duplicate of a received message that arrives
     * after the next step also closed makes {@code late 1 > lost 0} in the result.
     */
    @Test
    void aDuplicateArrivingAfterTheNextStepAlsoClosedIsNotCountedLate() throws Exception {
        // Step 0 closes at about 121 ms, step 1 at about 241 ms; the copy arrives at 300 ms, during step 2.
        transport.duplicate(0, 0, 50, 250 * MS);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 3));
        Arrival copy = transport.arrivals().stream().filter(a -> a.step() == 0 && a.sequence() == 50)
            .reduce((a, b) -> b).orElseThrow();
        assertThat(copy.atNs()).as("during step 2").isGreaterThan(dataWrites(2, 0).get(0).atNs());
        Counts c = flow(result, 0, 0);
        assertThat(c.lost()).isZero();
        assertThat(c.late()).as("a duplicate is no late first arrival").isZero();
        assertChecksHold(result);
    }

    @Test
    void messagesDelayedWithinTmaxAreReceived() throws Exception {
        // Seq 50 arrives 20 ms late (after 51..69: reordered); seq 99, the last, 150 ms late, inside the drain.
        transport.deliverLate(0, 0, 50, 20 * MS).deliverLate(0, 0, 99, 150 * MS);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 1));
        Counts c = flow(result, 0, 0);
        assertThat(c.received()).isEqualTo(100);
        assertThat(c.lost()).isZero();
        assertThat(c.lossEvents()).isZero();
        assertThat(c.reordered()).isEqualTo(1);
        assertThat(c.late()).isZero();
        assertThat((double) result.steps().get(0).delay().maxNs()).isCloseTo(150.0 * MS, within(1.5 * MS));
        assertChecksHold(result);
    }

    @Test
    void theDrainEndsAGraceAfterEverythingArrivedNotAtTmax() throws Exception {
        RunResult result = run(plan(1, 1000, 100, 0, 2000, 2));
        long lastArrival = transport.arrivals().stream().filter(a -> a.step() == 0).mapToLong(Arrival::atNs).max()
            .orElseThrow();
        long nextStepStart = dataWrites(1, 0).get(0).atNs();
        assertThat(nextStepStart - lastArrival).isBetween(RunEngine.DRAIN_GRACE_MS * MS, 2 * RunEngine.DRAIN_GRACE_MS
            * MS);
        assertThat(flow(result, 0, 0).received()).isEqualTo(100);
        assertChecksHold(result);
    }

    // ---- refusal and failures after accept ----

    @Test
    void aRefusalMidWindowIsSendFailedWithoutLossAndTakesNoWireSequence() throws Exception {
        transport.refuse(0, 0, 40, 3);
        RunResult result = run(plan(2, 2000, 100, 0, 200, 1));
        Counts c = flow(result, 0, 0);
        assertThat(c.scheduled()).isEqualTo(100);
        assertThat(c.sendFailed()).isEqualTo(3);
        assertThat(c.sent()).isEqualTo(97);
        assertThat(c.behind()).isZero();
        assertThat(c.received()).isEqualTo(97);
        assertThat(c.lost()).isZero();
        assertThat(c.lossEvents()).isZero();
        // Dense: the three refused attempts (the 40th to 42nd slots) all carried 40, which the 43rd slot took.
        List<Write> writes = dataWrites(0, 0);
        List<Write> refused = writes.stream().filter(w -> w.outcome() == MessageWriter.REFUSED).toList();
        assertThat(refused).extracting(Write::sequence).containsExactly(40L, 40L, 40L);
        assertThat(acceptedSequences(writes)).isEqualTo(range(0, 97));
        long windowStart = writes.get(0).intendedNs();
        assertThat(writes.stream().filter(w -> w.accepted() && w.sequence() == 40).findFirst().orElseThrow()
            .intendedNs()).isEqualTo(windowStart + 43 * MS);
        assertThat(flow(result, 0, 1).sent()).isEqualTo(100);
        StepResult step = result.steps().get(0);
        assertThat(step.attribution()).containsEntry("sendRefused", 3L).containsEntry("lost", 0L);
        assertThat(step.transportCounters()).containsEntry("memory.refused", 3L);
        assertChecksHold(result);
    }

    @Test
    void failedRangesMidWindowAndAtItsEndAreSendFailedAndSkipped() throws Exception {
        transport.failAfterAccept(0, 0, 40, 5).failAfterAccept(0, 0, 97, 3);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 1));
        Counts c = flow(result, 0, 0);
        assertThat(c.scheduled()).isEqualTo(100);
        assertThat(c.sendFailed()).isEqualTo(8);
        assertThat(c.sent()).isEqualTo(92);
        assertThat(c.received()).isEqualTo(92);
        assertThat(c.lost()).isZero();
        assertThat(c.lostInRuns()).isZero();
        assertThat(c.lossEvents()).isZero();
        assertThat(acceptedSequences(dataWrites(0, 0))).as("failed messages took their wire sequences")
            .isEqualTo(range(0, 100));
        assertThat(result.steps().get(0).transportCounters()).containsEntry("memory.failed", 8L);
        assertChecksHold(result);
    }

    @Test
    void lossOnBothSidesOfAFailedRangeIsOneLossRunAcrossIt() throws Exception {
        transport.failAfterAccept(0, 0, 40, 5).drop(0, 0, 39).drop(0, 0, 45);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 1));
        Counts c = flow(result, 0, 0);
        assertThat(c.sendFailed()).isEqualTo(5);
        assertThat(c.sent()).isEqualTo(95);
        assertThat(c.received()).isEqualTo(93);
        assertThat(c.lost()).isEqualTo(2);
        assertThat(c.lostInRuns()).isEqualTo(2);
        assertThat(c.lossEvents()).isEqualTo(1);
        assertThat(result.steps().get(0).flows().get(0).lossBurst().max()).isEqualTo(2);
        assertChecksHold(result);
    }

    @Test
    void aFailureSurfacingInTheDrainIsChargedToItsStep() throws Exception {
        // Seq 99 leaves at 99 ms; its failure surfaces 100 ms later, inside the 200 ms drain.
        transport.failAfterAccept(0, 0, 99, 1, 100 * MS);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 1));
        Counts c = flow(result, 0, 0);
        assertThat(c.sent()).isEqualTo(99);
        assertThat(c.sendFailed()).isEqualTo(1);
        assertThat(c.received()).isEqualTo(99);
        assertThat(c.lost()).isZero();
        assertThat(c.lossEvents()).isZero();
        assertThat(result.steps().get(0).warnings()).isEmpty();
        assertChecksHold(result);
    }

    @Test
    void aFailureSurfacingAfterItsStepClosedIsNotChargedToTheNextStep() throws Exception {
        // Seq 50 of step 0 never leaves; its failure surfaces 300 ms later, after step 0 closed (99 + 200 ms),
        // while step 1 sends.
        transport.failAfterAccept(0, 0, 50, 1, 300 * MS);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 2));
        Counts step0 = flow(result, 0, 0);
        assertThat(step0.sent()).as("counted as sent and lost where it was sent").isEqualTo(100);
        assertThat(step0.sendFailed()).isZero();
        assertThat(step0.received()).isEqualTo(99);
        assertThat(step0.lost()).isEqualTo(1);
        assertThat(step0.lossEvents()).isEqualTo(1);
        assertThat(result.steps().get(0).warnings()).isEmpty();
        Counts step1 = flow(result, 1, 0);
        assertThat(step1.sendFailed()).isZero();
        assertThat(step1.sent()).isEqualTo(100);
        assertThat(step1.received()).isEqualTo(100);
        assertThat(result.steps().get(1).warnings()).containsExactly("1 message(s) of an earlier step failed to "
            + "send after that step closed; they were counted there as sent and lost");
        assertChecksHold(result);
    }

    // ---- blocking ----

    @Test
    void aBlockMidWindowShowsInSenderLagNotInLoss() throws Exception {
        // Blocked at seq 30 (due at 30 ms) for 20 ms: retried every blocked back-off, then 30..50 leave at 50 ms.
        transport.block(0, 0, 30, 20 * MS);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 1));
        Counts c = flow(result, 0, 0);
        assertThat(c.sent()).isEqualTo(100);
        assertThat(c.behind()).isZero();
        assertThat(c.lost()).isZero();
        assertThat(transport.blockedAttempts()).isEqualTo(20 * MS / MemoryTransport.PACING.blockedBackoffNs());
        StepResult step = result.steps().get(0);
        assertThat(step.senderLag().count()).isEqualTo(100);
        assertThat((double) step.senderLag().maxNs()).isCloseTo(20.0 * MS, within(0.2 * MS));
        assertThat(step.senderLag().p50Ns()).isZero();
        List<Write> late = dataWrites(0, 0).stream().filter(w -> w.atNs() > w.intendedNs()).toList();
        assertThat(late).extracting(Write::sequence).isEqualTo(range(30, 50));
        assertChecksHold(result);
    }

    @Test
    void aBlockPastTheWindowEndIsBehindNotLoss() throws Exception {
        transport.block(0, 0, 90, 50 * MS);
        RunResult result = run(plan(2, 2000, 100, 0, 200, 1));
        Counts c = flow(result, 0, 0);
        assertThat(c.scheduled()).isEqualTo(100);
        assertThat(c.sent()).isEqualTo(90);
        assertThat(c.behind()).isEqualTo(10);
        assertThat(c.sendFailed()).isZero();
        assertThat(c.received()).isEqualTo(90);
        assertThat(c.lost()).isZero();
        assertThat(c.lossEvents()).isZero();
        assertThat(flow(result, 0, 1).sent()).isEqualTo(100);
        StepResult step = result.steps().get(0);
        assertThat(step.saturated()).isTrue();
        assertThat(step.windowNs()).isEqualTo(100 * MS);
        assertChecksHold(result);
    }

    // ---- abort ----

    @Test
    void aStopMidWindowKeepsTheCompletedStepsAndDropsThePartialOne() throws Exception {
        // The stop comes as a Ctrl-C does: from elsewhere, 30 ms into step 1's window, while the engine waits.
        long[] stopAt = {-1};
        StepHooks hooks = new StepHooks() {
            @Override
            public void duringWindow(String t, int step, ReceiverEndpoint receiver, long elapsedNs) {
                if (step == 1 && stopAt[0] < 0) {
                    stopAt[0] = time.nanoTime() - elapsedNs + 30 * MS;
                    time.at(stopAt[0], engine::requestStop);
                }
            }
        };
        RunResult result = run(plan(2, 2000, 100, 0, 200, 3), hooks);
        assertThat(result.status()).hasToString("interrupted");
        assertThat(result.steps()).extracting(StepResult::step).containsExactly(0);
        assertThat(finished).hasSize(1);
        assertThat(updates.get(updates.size() - 1).status()).hasToString("interrupted");
        assertThat(result.steps().get(0).counts().received()).isEqualTo(200);
        for (int f = 0; f < 2; f++) {
            List<Write> step1 = dataWrites(1, f);
            // The engine notices the stop at its next wake-up and aborts the send loop: less than the window.
            assertThat(step1.size()).isGreaterThanOrEqualTo(30).isLessThan(100);
        }
        assertThat(transport.writes()).noneMatch(w -> w.step() == 2);
        assertChecksHold(result);
    }

    @Test
    void aStopInTheDrainDropsThatStepToo() throws Exception {
        progress = new RunListener() {
            @Override
            public void progress(String t, int step, Phase phase, long elapsedNs, long totalNs, long sent,
                                 long received) {
                if (step == 1 && phase == Phase.DRAIN) {
                    engine.requestStop();
                }
            }
        };
        transport.deliverLate(1, 0, 99, 150 * MS); // keeps step 1 draining
        RunResult result = run(plan(1, 1000, 100, 0, 200, 3));
        assertThat(result.status()).hasToString("interrupted");
        assertThat(result.steps()).extracting(StepResult::step).containsExactly(0);
        assertThat(dataWrites(1, 0)).hasSize(100);
        assertChecksHold(result);
    }

    // ---- the checks that can fail ----

    @Test
    void aTransportReportingADeliveredMessageAsFailedBreaksACheck() throws Exception {
        transport.reportFailedButDeliver(0, 0, 50);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 1));
        Counts c = flow(result, 0, 0);
        assertThat(c.sent()).isEqualTo(99);
        assertThat(c.sendFailed()).isEqualTo(1);
        assertThat(c.received()).isEqualTo(100);
        assertThat(c.brokenChecks()).contains("received 100 distinct messages of 99 sent");
        assertThat(result.steps().get(0).warnings()).anyMatch(w -> w.startsWith(ACCOUNTING_FAILED + " on 1 flow"));
    }

    @Test
    void aTransportDeliveringASequenceNeverSentBreaksACheck() throws Exception {
        transport.deliverUnsent(0, 0, 99, 100);
        RunResult result = run(plan(1, 1000, 100, 0, 200, 1));
        Counts c = flow(result, 0, 0);
        assertThat(c.sent()).isEqualTo(100);
        assertThat(c.received()).isEqualTo(101);
        assertThat(c.brokenChecks()).contains("received 101 distinct messages of 100 sent",
            "lost -1 but the receiver's loss runs hold 0 missing (lostInRuns)");
        assertThat(result.steps().get(0).warnings()).anyMatch(w -> w.startsWith(ACCOUNTING_FAILED));
    }

    @Test
    void aSendFilterDropIsExactLossThroughTheWholeEngine() throws Exception {
        StepHooks hooks = new StepHooks() {
            @Override
            public SendFilter sendFilter(String t, int step) {
                return (flow, seq) -> flow == 1 && seq >= 10 && seq < 13;
            }
        };
        RunResult result = run(plan(2, 2000, 100, 0, 200, 1), hooks);
        Counts c = flow(result, 0, 1);
        assertThat(c.sent()).isEqualTo(100);
        assertThat(c.lost()).isEqualTo(3);
        assertThat(c.lossEvents()).isEqualTo(1);
        assertThat(acceptedSequences(dataWrites(0, 1))).doesNotContain(10L, 11L, 12L).hasSize(97);
        assertChecksHold(result);
    }

    // ---- where and when the window's counters are sampled ----

    @Test
    void withoutWarmUpTheCountersAreSampledOnTheEngineThreadBeforeTheFirstMessage() throws Exception {
        RunResult result = run(plan(2, 2000, 100, 0, 200, 2));
        List<WindowSample> samples = transport.windowSamples();
        assertThat(samples).extracting(WindowSample::side).containsExactly("receiver", "sender", "receiver",
            "sender");
        for (WindowSample s : samples) {
            assertThat(s.thread()).isSameAs(Thread.currentThread());
            assertThat(s.inSendTask()).as("not inside a send cycle").isFalse();
            assertThat(s.dataAcceptedBefore()).as("before the first message").isZero();
            assertThat(s.dataDeliveredBefore()).isZero();
            assertThat(s.atNs()).as("at the window's start").isEqualTo(dataWrites(s.step(), 0).get(0).intendedNs());
        }
        for (StepResult step : result.steps()) {
            assertThat(step.counterSkewNs()).isZero();
            // Sampled before the first message: the transport's window deltas are exactly the step's counts.
            assertThat(step.transportCounters()).containsEntry("memory.accepted", step.counts().sent())
                .containsEntry("memory.delivered", step.counts().received());
        }
        assertChecksHold(result);
    }

    @Test
    void withWarmUpTheCountersAreSampledAsTheWindowBeginsOnTheEngineThread() throws Exception {
        RunResult result = run(plan(2, 2000, 100, 50, 200, 1));
        List<WindowSample> samples = transport.windowSamples();
        assertThat(samples).extracting(WindowSample::side).containsExactly("receiver", "sender");
        long windowStart = warmupWrites(0, 0).get(0).intendedNs() + 50 * MS;
        for (WindowSample s : samples) {
            assertThat(s.thread()).isSameAs(Thread.currentThread());
            assertThat(s.inSendTask()).isFalse();
            assertThat(s.atNs()).isEqualTo(windowStart);
            // The send cycle due at the same instant ran first (a wait runs what is due by its deadline): each
            // flow's seq 0 left before the sample, which the skew, a time, cannot show in zero-cost virtual time.
            assertThat(s.dataAcceptedBefore()).isEqualTo(2);
        }
        assertThat(result.steps().get(0).counterSkewNs()).isZero();
        assertChecksHold(result);
    }

    /**
     * A host under load: each sample of the host's counters takes 30 ms, so the window's sample finishes 30 ms after
     * the window began. Its deltas are exact all the same when no loss counter moved from the step's first message
     * to the sample (a volume counter moving says nothing of loss); when one moved, the step says so and names it.
     * The counters are scripted per sample: before the first message, at the window, after the drain.
     */
    @ParameterizedTest
    @ValueSource(strings = {"quiet", "volume", "loss"})
    void aLateWindowSampleWarnsOnlyWhenALossCounterMovedAcrossIt(String moving) throws Exception {
        long[][] script = {
            {0, 1000, 0}, // Udp.InErrors, Udp.InDatagrams, dev.lo.txDrops: before the first message
            {moving.equals("loss") ? 3 : 0, moving.equals("quiet") ? 1000 : 1100, 0}, // at the window
            {7, 3000, 0}, // after the drain
        };
        int[] taken = {0};
        hostCounters = () -> {
            long[] v = script[Math.min(taken[0]++, script.length - 1)];
            time.spend(30 * MS);
            return new HostCounters.Sample(Map.of("Udp.InErrors", v[0], "Udp.InDatagrams", v[1], "dev.lo.txDrops",
                v[2]), 0, 0, 0, time.nanoTime());
        };
        RunResult result = run(plan(2, 2000, 100, 50, 200, 1));
        StepResult step = result.steps().get(0);
        assertThat(taken[0]).as("samples taken").isEqualTo(3);
        assertThat(step.counterSkewNs()).isGreaterThanOrEqualTo(30 * MS);
        List<String> skewWarnings = step.warnings().stream().filter(w -> w.startsWith("counters were sampled"))
            .toList();
        if (moving.equals("loss")) {
            assertThat(skewWarnings).singleElement().asString().contains("Udp.InErrors moved since the step's first "
                + "message").doesNotContain("InDatagrams").doesNotContain("txDrops");
            assertThat(step.hostCounters()).containsEntry("Udp.InErrors", 4L);
        } else {
            assertThat(skewWarnings).isEmpty();
            assertThat(step.hostCounters()).containsEntry("Udp.InErrors", 7L);
        }
        assertChecksHold(result);
    }

    // ---- the memory transport's other paths ----

    @Test
    void aLevelOfMaxRateRunsWhenEachWriteCostsTime() throws Exception {
        transport.writeCostNs(1_000);
        Plan plan = new Plan(List.of(MemoryTransport.NAME), 1, 40000, List.of(Level.MAX), 10 * MS, 0, 200 * MS, 64,
            "127.0.0.1");
        RunResult result = run(plan);
        Counts c = flow(result, 0, 0);
        assertThat(c.sent()).isGreaterThan(9_000);
        assertThat(c.received()).isEqualTo(c.sent());
        assertThat(c.scheduled()).isEqualTo(c.sent());
        assertThat(result.steps().get(0).transportCounters()).containsEntry("memory.accepted", c.sent());
        assertChecksHold(result);
    }

    @Test
    void echoRepliesComeBackWithTheRoundTrip() throws Exception {
        transport.delayNs(MS);
        Plan plan = new Plan(List.of(MemoryTransport.NAME), 1, 40000, List.of(Level.of(1000)), 100 * MS, 0,
            200 * MS, 64, "127.0.0.1", Plan.ECHO, 0);
        StepHooks hooks = new StepHooks() {
            @Override
            public SendFilter replyFilter(String t, int step) {
                return (flow, seq) -> seq == 7;
            }
        };
        RunResult result = run(plan, hooks);
        var echo = result.steps().get(0).echo();
        assertThat(echo.requestsSent()).isEqualTo(100);
        assertThat(echo.requestsReceived()).isEqualTo(100);
        assertThat(echo.repliesReceived()).isEqualTo(99);
        assertThat(echo.repliesLost()).isEqualTo(1);
        assertThat(echo.identitiesHold()).isTrue();
        assertThat((double) echo.rtt().maxNs()).isCloseTo(2.0 * MS, within(0.02 * MS));
        assertThat(result.steps().get(0).warnings()).noneMatch(w -> w.startsWith(ACCOUNTING_FAILED));
        assertChecksHold(result);
    }

    @Test
    void aPacingThatSpinsIsCaughtAsALivelockNotAHang() {
        transport.pacing(SendPacing.DEFAULT); // spins below 10 us, and virtual time never moves while spinning
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> run(plan(1, 200_000, 10, 0, 200, 1)))
            .hasMessageContaining("without time moving");
    }
}
