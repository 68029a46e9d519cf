package io.lossprobe.core.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.Echo;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import io.lossprobe.core.transport.EchoReplies;
import io.lossprobe.core.transport.Transport;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Echo mode's contract, for every transport that answers requests: replies match requests, both directions'
 * identities hold, and loss injected on one direction is attributed to that direction exactly.
 */
@Tag("system")
public abstract class EchoContractTest {
    protected abstract Transport transport();

    /** A base port no other test uses. */
    protected abstract int basePort();

    protected Map<String, String> options() {
        return Map.of();
    }

    protected Plan echoPlan(int ports, String level, long durationMs, int concurrency) {
        return new Plan(List.of(transport().name()), ports, basePort(), List.of(Level.parse(level)),
            TimeUnit.MILLISECONDS.toNanos(durationMs), TimeUnit.MILLISECONDS.toNanos(200),
            TimeUnit.SECONDS.toNanos(2), 64, "127.0.0.1", Plan.ECHO, concurrency);
    }

    protected RunResult run(Plan plan, StepHooks hooks) throws Exception {
        return new RunEngine(plan, Map.of(transport().name(), transport()), options(), new RunListener() {
        }, hooks).run();
    }

    /** Both directions' identities, per flow and in total, and the totals are the flows' sums. */
    protected static void assertEchoIdentities(StepResult step) {
        long sent = 0;
        long replies = 0;
        for (FlowResult f : step.flows()) {
            Echo e = f.echo();
            assertThat(e).as("flow %d has echo figures", f.flow()).isNotNull();
            assertThat(e.identitiesHold()).as("flow %d: %s", f.flow(), e).isTrue();
            assertThat(e.requestsSent()).isEqualTo(f.counts().sent());
            assertThat(e.requestsReceived()).isEqualTo(f.counts().received());
            assertThat(e.rtt().count()).isEqualTo(e.repliesReceived());
            sent += e.requestsSent();
            replies += e.repliesReceived();
        }
        assertThat(step.echo().identitiesHold()).isTrue();
        // Checks that can fail: the requests' and the replies' trackers agree with the counts.
        assertThat(step.warnings()).noneMatch(w -> w.startsWith("accounting check failed"));
        for (FlowResult f : step.flows()) {
            assertThat(f.counts().brokenChecks()).as("flow %d", f.flow()).isEmpty();
        }
        assertThat(step.echo().requestsSent()).isEqualTo(sent);
        assertThat(step.echo().repliesReceived()).isEqualTo(replies);
        assertThat(step.echo().rtt().count()).isEqualTo(replies);
    }

    private static long socketDrops(StepResult s) {
        return s.socketDrops() == null ? 0 : s.socketDrops();
    }

    @Test
    @Timeout(120)
    void everyRequestIsAnsweredAndTheRoundTripIsMeasured() throws Exception {
        RunResult r = run(echoPlan(8, "8k", 1000, 0), StepHooks.NONE);
        StepResult s = r.steps().get(0);
        assertEchoIdentities(s);
        TransportContractTest.assertCountersDeclared(r);
        // The responder says what became of every counted request's reply, in the one vocabulary of all transports.
        for (FlowResult f : s.flows()) {
            assertThat(f.transport().get(EchoReplies.SENT) + f.transport().get(EchoReplies.DROPPED))
                .as("flow %d: replies sent and dropped", f.flow()).isEqualTo(f.echo().requestsReceived());
        }
        assertThat(s.transportCounters().get(EchoReplies.SENT) + s.transportCounters().get(EchoReplies.DROPPED))
            .isEqualTo(s.echo().requestsReceived());
        assertThat(s.counts().scheduled()).isEqualTo(8000);
        // Behind only if the sender was off the CPU as the window ended (its last pass sends a batch per flow).
        assertThat(s.echo().requestsSent()).isBetween(7200L, 8000L);
        assertThat(s.echo().duplicateReplies()).isZero();
        assertThat(s.echo().roundTripLost()).as("loopback: lost only where sockets dropped")
            .isLessThanOrEqualTo(socketDrops(s));
        assertThat(s.echo().rtt().p50Ns()).isPositive();
        // TPS is replies over the window as it ran (a late last pass lengthens it): replies per nominal second
        // are bounded by what was sent, and most requests of a loopback step come back.
        assertThat(s.echo().repliesReceived()).isGreaterThanOrEqualTo(s.echo().requestsSent() * 9 / 10);
        assertThat(s.echo().tps()).isPositive().isLessThanOrEqualTo(s.echo().requestsSent() * 1.0);
    }

    @Test
    @Timeout(120)
    void lossOnTheWayOutIsRequestLoss() throws Exception {
        SendFilter requests = (flow, seq) -> flow == 2 && seq >= 100 && seq < 110;
        RunResult r = run(echoPlan(4, "4k", 500, 0), StepHooks.sendFilter(requests));
        StepResult s = r.steps().get(0);
        assertEchoIdentities(s);
        Echo flow2 = s.flows().get(2).echo();
        assertThat(flow2.requestsLost()).isEqualTo(10);
        assertThat(flow2.repliesLost()).isZero();
        assertThat(s.echo().requestsLost()).isEqualTo(10 + socketDrops(s));
    }

    /** Refused requests take no wire sequence: neither the requests' nor the replies' tracker sees a gap. */
    @Test
    @Timeout(120)
    void aRefusedRequestIsNeitherRequestNorReplyLoss() throws Exception {
        SendFilter refuse = SendFilter.refusing((flow, index) -> flow == 1 && index >= 20 && index < 30);
        RunResult r = run(echoPlan(4, "4k", 500, 0), StepHooks.sendFilter(refuse));
        StepResult s = r.steps().get(0);
        assertEchoIdentities(s);
        FlowResult flow1 = s.flows().get(1);
        assertThat(flow1.counts().sendFailed()).isEqualTo(10);
        assertThat(flow1.counts().lossEvents()).isZero();
        assertThat(flow1.echo().roundTripLost()).isLessThanOrEqualTo(socketDrops(s));
    }

    @Test
    @Timeout(120)
    void lossOnTheWayBackIsReplyLoss() throws Exception {
        SendFilter replies = (flow, seq) -> flow == 1 && seq >= 50 && seq < 57;
        RunResult r = run(echoPlan(4, "4k", 500, 0), new StepHooks() {
            @Override
            public SendFilter replyFilter(String transport, int step) {
                return replies;
            }
        });
        StepResult s = r.steps().get(0);
        assertEchoIdentities(s);
        Echo flow1 = s.flows().get(1).echo();
        assertThat(flow1.repliesLost()).isEqualTo(7);
        assertThat(flow1.requestsLost()).isZero();
        assertThat(flow1.roundTripLost()).isEqualTo(7);
    }

    @Test
    @Timeout(120)
    void closedLoopKeepsAtMostTheConcurrencyOutstanding() throws Exception {
        for (int concurrency : new int[] {1, 10}) {
            RunResult r = run(echoPlan(4, "max", 500, concurrency), StepHooks.NONE);
            StepResult s = r.steps().get(0);
            assertEchoIdentities(s);
            assertThat(s.counts().behind()).isZero();
            assertThat(s.echo().repliesReceived()).as("concurrency %d", concurrency).isPositive();
            for (FlowResult f : s.flows()) {
                // Never more requests in flight than allowed: what was sent but not answered fits the window.
                assertThat(f.echo().roundTripLost()).isLessThanOrEqualTo(concurrency + socketDrops(s));
            }
        }
    }
}
