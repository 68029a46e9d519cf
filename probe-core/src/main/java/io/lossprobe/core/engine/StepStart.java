package io.lossprobe.core.engine;

import io.lossprobe.core.accounting.FailedRanges;
import io.lossprobe.core.accounting.SendFilter;
import io.lossprobe.core.accounting.SequenceTracker;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import java.util.Objects;

/**
 * Everything a side needs to begin one step, the one value the engine hands every {@link SendSide} and
 * {@link ReceiveSide} of the step ({@link SendSide#beginStep}, {@link ReceiveSide#beginStep}). Senders read the
 * rates, the filter, the warm-up and the window; receivers the level, the window, the tracking windows, the ledger
 * and the clock offset.
 *
 * @param step          the step's number within its transport
 * @param level         the step's rate over all flows ({@link Level#MAX}: as fast as the transport accepts)
 * @param flowRates     each flow's share of the level, messages/s (0 = max)
 * @param windowBits    each flow's sequence tracking window ({@link SequenceTracker#windowsFor})
 * @param sendFilter    the messages the senders drop on purpose (a test's fault injection; else
 *                      {@link SendFilter#NONE})
 * @param warmupNs      the warm-up before the window: the plan's, or a rate search's short trial's
 * @param windowNs      the measured window
 * @param failures      the step's failure ledger, one per flow: the senders record there the accepted messages that
 *                      never left and the receivers skip them (read as they are added, until the step closes)
 * @param clockOffsetNs the receivers' clock minus the senders' (0 on one host): every delay is corrected by it
 * @param direction     which way the step's data goes between the run's two ends
 */
public record StepStart(int step, Level level, long[] flowRates, int[] windowBits, SendFilter sendFilter,
                        long warmupNs, long windowNs, FailedRanges[] failures, long clockOffsetNs,
                        Direction direction) {
    /**
     * Which way a step's data goes. A run has one direction: from the senders to the receivers the engine opened
     * (with {@code --reverse} the senders are the server's, the receivers this host's). A run in both directions at
     * once would add the way back here.
     */
    public enum Direction {
        FORWARD
    }

    public StepStart {
        Objects.requireNonNull(level, "level");
        Objects.requireNonNull(sendFilter, "sendFilter");
        Objects.requireNonNull(direction, "direction");
        if (flowRates.length != windowBits.length || flowRates.length != failures.length) {
            throw new IllegalArgumentException("a step needs a rate, a tracking window and a ledger per flow");
        }
    }

    /**
     * Step {@code step} of {@code plan} at {@code level}: each flow's share of the level, the tracking windows the
     * plan's drain needs at that rate, and a fresh ledger.
     */
    public static StepStart of(Plan plan, int step, Level level, StepTiming timing, SendFilter filter,
                               long clockOffsetNs) {
        long[] rates = new long[plan.ports()];
        for (int i = 0; i < rates.length; i++) {
            rates[i] = level.isMax() ? 0 : plan.flowRate(level, i);
        }
        return new StepStart(step, level, rates, SequenceTracker.windowsFor(plan, level), filter, timing.warmupNs(),
            timing.windowNs(), FailedRanges.perFlow(rates.length), clockOffsetNs, Direction.FORWARD);
    }

    /** How many flows the step has. */
    public int flows() {
        return flowRates.length;
    }

    /** Whether the step warms up and measures for as long as {@code plan} says (a rate search's trials may not). */
    public boolean hasTimingOf(Plan plan) {
        return warmupNs == plan.warmupNs() && windowNs == plan.durationNs();
    }
}
