package io.lossprobe.core.engine;

import io.lossprobe.core.result.ClockOffset;
import io.lossprobe.core.result.DelayBaseline;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.SignedHistogram;
import java.util.ArrayList;
import java.util.List;

/**
 * The clocks a step's delays are measured on. On one host there is one clock and delays are exact. Between hosts
 * the other host's clock offset is estimated over the control channel before the step (the receivers correct every
 * delay by it) and again after it: delays are one-way delays true to the estimate's bound plus how far the offset
 * drifted meanwhile.
 *
 * <p>With both ends on other hosts ({@code run --from A --target B}) each is estimated against this host's clock
 * and the two compose: B's minus A's is (B - here) - (A - here), true to the sum of the two bounds.
 *
 * @param offset                the other host's clock minus this one's, before the step (the receivers' host's
 *                              minus the senders' when both are elsewhere); null on one host
 * @param receiverMinusSenderNs what the receivers subtract from each arrival-minus-send difference
 * @param after                 the estimate after the step, or null
 */
record Clocks(ClockOffset offset, long receiverMinusSenderNs, ClockOffset after) {
    static final Clocks ONE_HOST = new Clocks(null, 0, null);

    /** Estimates the offset when the receivers or the senders are on another host. */
    static Clocks estimate(StepSides sides) throws Exception {
        ClockOffset rx = sides.receiversClockOffset();
        ClockOffset tx = rx == null ? null : sides.sendersClockOffset();
        if (rx != null && tx != null) {
            ClockOffset between = between(rx, tx);
            return new Clocks(between, between.offsetNs(), null); // both elsewhere: theirs, composed
        }
        if (rx != null) {
            return new Clocks(rx, rx.offsetNs(), null); // receivers on the server: its clock minus ours
        }
        tx = sides.sendersClockOffset();
        if (tx != null) {
            return new Clocks(tx, -tx.offsetNs(), null); // senders on the server: our clock minus its
        }
        return ONE_HOST;
    }

    /**
     * The receivers' host's clock minus the senders', both estimated against this host: offsets subtract
     * (wrapping), bounds add; the round trip and exchanges are the worse estimate's.
     */
    static ClockOffset between(ClockOffset receivers, ClockOffset senders) {
        return new ClockOffset(receivers.offsetNs() - senders.offsetNs(),
            receivers.uncertaintyNs() + senders.uncertaintyNs(), Math.max(receivers.rttNs(), senders.rttNs()),
            Math.min(receivers.exchanges(), senders.exchanges()));
    }

    /** The same, with the estimate after the step for the drift. */
    Clocks reestimated(StepSides sides) throws Exception {
        if (offset == null) {
            return this;
        }
        ClockOffset now = sides.receiversClockOffset();
        ClockOffset senders = now == null ? null : sides.sendersClockOffset();
        if (now != null && senders != null) {
            now = between(now, senders);
        }
        return new Clocks(offset, receiverMinusSenderNs, now != null ? now : sides.sendersClockOffset());
    }

    String basis() {
        return offset == null ? null : Latency.CLOCK_OFFSET;
    }

    /** How far the offset moved over the step; null on one host or without a second estimate. */
    Long driftNs() {
        return offset == null || after == null ? null : after.driftSinceNs(offset);
    }

    /** The bound on every corrected delay: the estimate's own, plus the drift over the step. */
    Long uncertaintyNs() {
        if (offset == null) {
            return null;
        }
        long drift = driftNs() == null ? 0 : Math.abs(driftNs());
        return offset.uncertaintyNs() + drift;
    }

    /** Warnings about the delays in words. */
    List<String> warnings(SignedHistogram delay, DelayBaselines baselines) {
        List<String> out = new ArrayList<>();
        if (offset == null) {
            if (delay.belowCount() > 0) {
                out.add(delay.belowCount() + " message(s) arrived before their intended send time on one clock "
                    + "(a clock problem)");
            }
            return out;
        }
        long bound = uncertaintyNs();
        if (delay.count() > 0 && delay.min() < -bound) {
            out.add(String.format(java.util.Locale.ROOT, "one-way delays reach %.1f us below zero, beyond the clock "
                    + "estimate's +-%.1f us: the clocks moved during the step or the estimate is off; compare the "
                    + "delay over baseline", delay.min() / 1e3, bound / 1e3));
        }
        if (baselines != null && baselines.flowsOnWindow() > 0) {
            out.add(baselines.flowsOnWindow() + " flow(s) had fewer than " + DelayBaseline.MIN_WARMUP_SAMPLES
                + " warm-up messages, so their delay over baseline is measured against the window's own minimum: "
                + "a delay present for the whole window shows only in the one-way delay (+-"
                + String.format(java.util.Locale.ROOT, "%.1f", bound / 1e3) + " us)");
        }
        return out;
    }
}
